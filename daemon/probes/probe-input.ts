/**
 * What one check of a resource is given (src/probes/types.ts ProbeInput), built in one place from
 * either a stored row (the scheduler) or a request body (`POST /admin/api/resources/test`), so
 * that a check without saving runs exactly as the saved resource would.
 */
import type { Static } from '@sinclair/typebox';
import type { ResourceCreate } from '../../src/api/schemas/monitoring.ts';
import type { SecretBox } from '../auth/secret-box.ts';
import { fieldsOf, openSecrets, type RequestFields } from './http-request-store.ts';
import { conditionsOf } from './resource-conditions.ts';
import { optionFieldOf, probeOptionsOf, storedOptions } from './check-options.ts';
import type { HttpRequestSpec } from '../../src/probes/types.ts';
import type { ProbeInput, ResourceType } from './types.ts';

/** The columns of `resources` a check reads. */
export const PROBE_COLUMNS = [
  'id',
  'resource_type',
  'target',
  'skip_tls',
  'recursive',
  'interval_seconds',
  'next_run_at',
  'active',
  'quorum',
  'conditions',
  'http_request',
  'http_secrets',
  'timeout_seconds',
  'upside_down',
  'check_options',
] as const;

/** A `resources` row as PROBE_COLUMNS selects it. */
export interface ProbeRow {
  id: number;
  resource_type: string;
  target: string;
  skip_tls: number;
  recursive: number;
  interval_seconds: number;
  next_run_at: number | null;
  active: number;
  quorum: string;
  conditions: string | null;
  http_request: string | null;
  http_secrets: string | null;
  timeout_seconds: number | null;
  upside_down: number | null;
  check_options: string | null;
}

/**
 * A check as the daemon runs it. `unopened`: the resource's secrets could not be opened with this
 * install secret (a database copied without it), so the check is not run: every location reports
 * this reason rather than checking without the secrets.
 */
export interface CheckInput extends ProbeInput {
  unopened?: string;
}

export const UNOPENED =
  "this resource's secrets cannot be opened with this daemon's install secret (was the database copied without it?): set them again";

/** The check of a stored resource, its secrets opened with `box` (in memory only). */
export function probeInputOf(row: ProbeRow, box: SecretBox): CheckInput {
  const secrets = openSecrets(box, row.http_secrets);
  const input: CheckInput = {
    resourceId: row.id,
    type: row.resource_type as ResourceType,
    target: row.target,
    skipTLS: row.skip_tls === 1,
    recursive: row.recursive === 1,
    conditions: conditionsOf(row.conditions),
    ...requestInput(row.http_request === null && row.http_secrets === null, fieldsOf(row, secrets ?? {})),
  };
  const options = probeOptionsOf(row.resource_type, storedOptions(row.check_options));
  if (options) input.options = options;
  if (secrets === undefined) input.unopened = UNOPENED;
  return input;
}

/** The check of a resource body that was validated as a create would validate it; `resourceId` 0 (nothing stored). */
export function probeInputFromBody(body: Static<typeof ResourceCreate>): ProbeInput {
  const field = optionFieldOf(body.resourceType);
  const options = probeOptionsOf(body.resourceType, field && body[field]);
  const input: ProbeInput = {
    resourceId: 0,
    // checkResourceBody refused PUSH and a missing target before this.
    type: body.resourceType as ProbeInput['type'],
    target: body.target ?? '',
    skipTLS: body.skipTLS ?? false,
    recursive: body.recursive ?? false,
    conditions: body.conditions ?? [],
    ...requestInput(!HTTP_ONLY.some((k) => body[k] !== undefined), body),
  };
  if (options) input.options = options;
  return input;
}

/** The fields that only an HTTP check reads (timeoutSeconds and upsideDown apply to every type). */
export const HTTP_ONLY = [
  'method',
  'headers',
  'secretHeaders',
  'body',
  'contentType',
  'auth',
  'clientCert',
  'clientKey',
  'followRedirects',
  'expectStatus',
] as const satisfies readonly (keyof RequestFields)[];

/**
 * ProbeInput's `http`, `timeoutMs` and `upsideDown`, each left out when not set: a resource that
 * sets none keeps the seed's check (`seed`: no HTTP field is set).
 */
function requestInput(seed: boolean, f: RequestFields): Pick<ProbeInput, 'http' | 'timeoutMs' | 'upsideDown'> {
  const out: Pick<ProbeInput, 'http' | 'timeoutMs' | 'upsideDown'> = {};
  if (!seed) out.http = httpSpec(f);
  if (f.timeoutSeconds != null) out.timeoutMs = f.timeoutSeconds * 1000;
  if (f.upsideDown) out.upsideDown = true;
  return out;
}

function httpSpec(f: RequestFields): HttpRequestSpec {
  const body = f.body ?? null;
  return {
    method: f.method ?? 'GET',
    headers: [...Object.entries(f.headers ?? {}), ...Object.entries(f.secretHeaders ?? {})].filter(
      (h): h is [string, string] => h[1] !== null,
    ),
    secretHeaders: Object.entries(f.secretHeaders ?? {})
      .filter(([, value]) => value !== null)
      .map(([name]) => name),
    body,
    contentType: body === null ? null : (f.contentType ?? 'text/plain'),
    auth: f.auth ?? null,
    clientCert: f.clientCert != null && f.clientKey != null ? { cert: f.clientCert, key: f.clientKey } : null,
    followRedirects: f.followRedirects ?? true,
    expectStatus: f.expectStatus ? f.expectStatus.map(statusRange) : null,
  };
}

/** `301` or `"200-299"` as an inclusive range. */
export function statusRange(s: number | string): [number, number] {
  const [from, to = from] = String(s).split('-').map(Number);
  return [from, to];
}
