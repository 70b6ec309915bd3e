import type { Static } from '@sinclair/typebox';
import type { ResourcePatch } from '../../src/api/schemas/monitoring.ts';
import { conflict } from '../../src/errors.ts';
import type { SecretBox } from '../auth/secret-box.ts';
import {
  definedHeaders,
  plainOf,
  type RequestColumns,
  type RequestFields,
  type SecretValues,
  splitFields,
} from '../probes/http-request-store.ts';

/** The request fields of a PATCH: null removes an optional field, and one header in a header map. */
export type RequestPatch = Pick<Static<typeof ResourcePatch>, keyof RequestFields>;

const SECRET_FIELDS = ['secretHeaders', 'auth', 'clientCert', 'clientKey'] as const;

/** Whether the PATCH sets or removes any request field. */
export const touchesRequest = (patch: RequestPatch) =>
  (Object.keys(REQUEST_KEYS) as (keyof RequestFields)[]).some((k) => patch[k] !== undefined);

const REQUEST_KEYS: Record<keyof RequestFields, true> = {
  method: true,
  headers: true,
  secretHeaders: true,
  body: true,
  contentType: true,
  auth: true,
  clientCert: true,
  clientKey: true,
  followRedirects: true,
  expectStatus: true,
  timeoutSeconds: true,
  upsideDown: true,
};

/** The stored fields with the PATCH applied: headers merge by name (case-insensitively), the rest replace. */
export function mergeRequest(before: RequestFields, patch: RequestPatch): RequestFields {
  const out: Record<string, unknown> = { ...before };
  for (const key of Object.keys(REQUEST_KEYS) as (keyof RequestFields)[]) {
    const value = patch[key];
    if (value === undefined) continue;
    if (value === null) delete out[key];
    else if (key === 'headers' || key === 'secretHeaders')
      out[key] = mergeHeaders(before[key] ?? {}, value as Record<string, string | null>);
    else out[key] = value;
  }
  return out as RequestFields;
}

/** A header the PATCH names replaces the stored one of that name in place (so an equal PATCH keeps the order); null removes it. */
function mergeHeaders(before: Record<string, string | null>, patch: Record<string, string | null>): Record<string, string> {
  const byLower = new Map(Object.keys(patch).map((n) => [n.toLowerCase(), n]));
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(definedHeaders(before))) {
    const given = byLower.get(name.toLowerCase());
    if (given === undefined) out[name] = value;
    else if (patch[given] !== null) out[given] = patch[given] as string;
    byLower.delete(name.toLowerCase());
  }
  for (const name of byLower.values()) if (patch[name] !== null) out[name] = patch[name] as string;
  return out;
}

/**
 * 409 when this install cannot open the stored secrets and the PATCH would need them: each secret
 * field that is set must be given again whole (or removed with null), so none is lost unseen.
 */
export function checkUnopenedPatch(httpRequest: string | null, patch: RequestPatch): void {
  if (!SECRET_FIELDS.some((k) => patch[k] !== undefined)) return;
  const p = plainOf(httpRequest);
  const stored = { secretHeaders: !!p.secretHeaders, auth: !!p.auth, clientCert: !!p.clientCert, clientKey: !!p.clientCert };
  const missing = SECRET_FIELDS.filter((k) => stored[k] && (patch[k] === undefined || (k === 'secretHeaders' && patch[k] !== null)));
  if (missing.length)
    throw conflict(
      `The stored secrets cannot be opened with this daemon's install secret (was the database copied without it?): remove ${missing.join(', ')} with null first`,
      missing[0],
    );
}

/**
 * The request columns that differ from the row's, to set. Secrets compare opened (apply sends them
 * on every run): equal ones keep their sealed text. `opened` undefined: they could not be opened
 * (checkUnopenedPatch passed), so they are resealed only when the PATCH gave secret fields.
 */
export function requestChanges(
  before: RequestColumns,
  fields: RequestFields,
  opened: SecretValues | undefined,
  patch: RequestPatch,
  box: SecretBox,
): Partial<RequestColumns> {
  const { plain, secrets } = splitFields(fields);
  const keep =
    opened === undefined ? !SECRET_FIELDS.some((k) => patch[k] !== undefined) : JSON.stringify(secrets) === JSON.stringify(opened);
  if (keep && opened === undefined) {
    // Kept unopened: the plain part still names what the sealed blob holds.
    const stored = plainOf(before.http_request);
    if (stored.secretHeaders) plain.secretHeaders = stored.secretHeaders;
    if (stored.clientCert) plain.clientCert = true;
  }
  const out: Partial<RequestColumns> = {};
  const plainColumn = Object.keys(plain).length ? JSON.stringify(plain) : null;
  if (plainColumn !== before.http_request) out.http_request = plainColumn;
  if (!keep) out.http_secrets = Object.keys(secrets).length ? box.seal(JSON.stringify(secrets)) : null;
  const timeout = fields.timeoutSeconds ?? null;
  if (timeout !== (before.timeout_seconds === null ? null : Number(before.timeout_seconds))) out.timeout_seconds = timeout;
  const upsideDown = fields.upsideDown ? 1 : null;
  if (upsideDown !== (before.upside_down === 1 ? 1 : null)) out.upside_down = upsideDown;
  return out;
}
