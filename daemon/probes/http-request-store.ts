/**
 * The stored form of a resource's request fields (migration 0018, docs/DECISIONS.md#http-request-fields),
 * read by the scheduler and the API alike: the plain fields as one JSON column, the secret values
 * sealed as one JSON blob with the install secret, `timeout_seconds` and `upside_down`. A resource
 * that sets none of them has all four NULL, and its check is the seed's.
 */
import type { Static } from '@sinclair/typebox';
import type { ResourceCreate } from '../../src/api/schemas/monitoring.ts';
import type { httpCheckFields } from '../../src/api/schemas/http-check.ts';
import { boxFor, type SecretBox } from '../auth/secret-box.ts';
import type { DaemonContext } from '../context.ts';
import type { HttpMethod } from '../../src/probes/types.ts';

type RequestKey = keyof ReturnType<typeof httpCheckFields>;
/** The request fields as create takes them (and as a PATCH leaves them once merged), all optional. */
export type RequestFields = Pick<Static<typeof ResourceCreate>, RequestKey>;

/** What `http_request` holds: the plain fields, the names of the secret headers, whether a client certificate is set. */
export interface PlainRequest {
  method?: HttpMethod;
  headers?: Record<string, string>;
  body?: string;
  contentType?: string;
  auth?: { type: 'basic'; username: string } | { type: 'bearer' };
  followRedirects?: false;
  expectStatus?: string[];
  secretHeaders?: string[];
  clientCert?: true;
}

/** What `http_secrets` seals. */
export interface SecretValues {
  headers?: Record<string, string>;
  password?: string;
  token?: string;
  clientCert?: string;
  clientKey?: string;
}

/** The four columns, NULL for what is not set. */
export interface RequestColumns {
  http_request: string | null;
  http_secrets: string | null;
  timeout_seconds: number | null;
  upside_down: number | null;
}

/** The box that seals resources' secrets: its own key label, apart from notifiers' and registries'. */
export function requestBox(ctx: Pick<DaemonContext, 'installSecret'>): SecretBox {
  return boxFor(ctx.installSecret, 'resource-secrets');
}

const isEmpty = (o: object) => Object.keys(o).length === 0;

/** A header map without the nulls a PATCH uses to remove one (the schema's type allows them). */
export function definedHeaders(map: Record<string, string | null>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(map)) if (value !== null) out[name] = value;
  return out;
}

/** `200` and `"200-299"` as the strings reads show. */
export const statusText = (s: number | string) => String(s);

/**
 * The plain and secret parts of the fields, defaults left out (GET, following redirects, not upside
 * down), so that a resource that spells the defaults out keeps the seed's fast path.
 */
export function splitFields(f: RequestFields): { plain: PlainRequest; secrets: SecretValues } {
  const plain: PlainRequest = {};
  const secrets: SecretValues = {};
  if (f.method && f.method !== 'GET') plain.method = f.method;
  const headers = definedHeaders(f.headers ?? {});
  const secretHeaders = definedHeaders(f.secretHeaders ?? {});
  if (!isEmpty(headers)) plain.headers = headers;
  if (f.body != null) plain.body = f.body;
  if (f.contentType != null) plain.contentType = f.contentType;
  if (f.auth?.type === 'basic') {
    plain.auth = { type: 'basic', username: f.auth.username };
    secrets.password = f.auth.password;
  } else if (f.auth?.type === 'bearer') {
    plain.auth = { type: 'bearer' };
    secrets.token = f.auth.token;
  }
  if (f.followRedirects === false) plain.followRedirects = false;
  if (f.expectStatus) plain.expectStatus = f.expectStatus.map(statusText);
  if (!isEmpty(secretHeaders)) {
    plain.secretHeaders = Object.keys(secretHeaders);
    secrets.headers = secretHeaders;
  }
  if (f.clientCert != null) secrets.clientCert = f.clientCert;
  if (f.clientKey != null) secrets.clientKey = f.clientKey;
  if (f.clientCert != null && f.clientKey != null) plain.clientCert = true;
  return { plain, secrets };
}

/** The columns of the fields; the secrets sealed with `box`. */
export function toColumns(f: RequestFields, box: SecretBox): RequestColumns {
  const { plain, secrets } = splitFields(f);
  return {
    http_request: isEmpty(plain) ? null : JSON.stringify(plain),
    http_secrets: isEmpty(secrets) ? null : box.seal(JSON.stringify(secrets)),
    timeout_seconds: f.timeoutSeconds ?? null,
    upside_down: f.upsideDown ? 1 : null,
  };
}

/** The plain fields of the `http_request` column; a value that is not an object reads as none. */
export function plainOf(column: string | null): PlainRequest {
  if (!column) return {};
  try {
    const value: unknown = JSON.parse(column);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as PlainRequest) : {};
  } catch {
    return {};
  }
}

/** The opened `http_secrets` column: `{}` when none, undefined when this install secret cannot open it. */
export function openSecrets(box: SecretBox, column: string | null): SecretValues | undefined {
  if (!column) return {};
  const text = box.open(column);
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as SecretValues;
  } catch {
    return undefined;
  }
}

/** The fields back from the columns, secrets opened (`{}` when they could not be: the caller says so). */
export function fieldsOf(
  row: Pick<RequestColumns, 'timeout_seconds' | 'upside_down'> & { http_request: string | null },
  secrets: SecretValues,
): RequestFields {
  const p = plainOf(row.http_request);
  const f: RequestFields = {};
  if (p.method) f.method = p.method;
  if (p.headers) f.headers = { ...p.headers };
  if (p.body !== undefined) f.body = p.body;
  if (p.contentType !== undefined) f.contentType = p.contentType;
  if (p.auth?.type === 'basic') f.auth = { type: 'basic', username: p.auth.username, password: secrets.password ?? '' };
  else if (p.auth?.type === 'bearer') f.auth = { type: 'bearer', token: secrets.token ?? '' };
  if (p.followRedirects === false) f.followRedirects = false;
  if (p.expectStatus) f.expectStatus = [...p.expectStatus];
  if (secrets.headers) f.secretHeaders = { ...secrets.headers };
  if (secrets.clientCert !== undefined) f.clientCert = secrets.clientCert;
  if (secrets.clientKey !== undefined) f.clientKey = secrets.clientKey;
  if (row.timeout_seconds !== null) f.timeoutSeconds = Number(row.timeout_seconds);
  if (row.upside_down === 1) f.upsideDown = true;
  return f;
}
