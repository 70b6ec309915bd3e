import { HTTP_METHODS, httpCheckFields, MAX_HEADERS, MAX_REQUEST_BODY_BYTES } from '../../src/api/schemas/http-check.ts';
import { HEADER_NAME, isStatusRange } from '../commands/http-check-flags.ts';
import { expandSecret } from './notifiers-spec.ts';

/**
 * The request fields of a `resources:` entry (docs/API.md#request-fields). Plain fields are
 * compared with the daemon's; secrets (`secretHeaders` values, the basic password, the bearer
 * token, `clientCert` and `clientKey`) must be `${ENV_VAR}` references, expanded now, as for
 * notifiers: the file is meant to be committed. A PEM goes in a variable whole:
 * `CLIENT_KEY="$(cat client.key)" monctl apply -f monitoring.yaml`. `null` removes a field.
 */
export interface HttpCheckSpec {
  /** As the API takes them; compared with the daemon's view. */
  plain: {
    method?: (typeof HTTP_METHODS)[number];
    headers?: Record<string, string>;
    body?: string | null;
    contentType?: string | null;
    followRedirects?: boolean;
    expectStatus?: string[] | null;
    timeoutSeconds?: number | null;
    upsideDown?: boolean;
  };
  /** Expanded: sent on every apply (reads never return them, so they cannot be compared). */
  secretHeaders?: Record<string, string>;
  auth?: { type: 'basic'; username: string; password: string } | { type: 'bearer'; token: string } | null;
  clientCert?: string | null;
  clientKey?: string | null;
}

/** The fields this file handles, as the API names them; all but these two need an HTTP resource. */
const HTTP_CHECK_KEYS = Object.keys(httpCheckFields(false));
const ANY_TYPE = ['timeoutSeconds', 'upsideDown'];

type Obj = Record<string, unknown>;
type Err = (path: string, msg: string) => void;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function headerMap(path: string, v: unknown, err: Err, value: (path: string, v: unknown) => string | undefined) {
  if (!isObj(v) || Object.keys(v).length > MAX_HEADERS)
    return void err(path, `must be a mapping of at most ${MAX_HEADERS} header names to values`);
  const out: Record<string, string> = {};
  for (const [name, raw] of Object.entries(v)) {
    if (!HEADER_NAME.test(name)) err(`${path}.${name}`, 'is not a header name');
    const x = value(`${path}.${name}`, raw);
    if (x !== undefined) out[name] = x;
  }
  return out;
}

export function validateHttpCheck(p: string, r: Obj, type: string | undefined, err: Err, env = process.env): HttpCheckSpec | undefined {
  const given = HTTP_CHECK_KEYS.filter((k) => r[k] !== undefined);
  if (given.length === 0) return undefined;
  for (const k of given) if (type !== 'HTTP' && !ANY_TYPE.includes(k)) err(`${p}.${k}`, 'is for HTTP resources');
  const spec: HttpCheckSpec = { plain: {} };
  const secret = (path: string, v: unknown) => {
    const x = expandSecret(v, env);
    if ('error' in x) return void err(path, x.error);
    return x.value;
  };
  const text = (k: 'body' | 'contentType', max: number) => {
    const v = r[k];
    if (v === null) spec.plain[k] = null;
    else if (typeof v !== 'string' || Buffer.byteLength(v) > max || (k === 'contentType' && v === ''))
      err(`${p}.${k}`, `must be text of at most ${max} bytes, or null`);
    else spec.plain[k] = v;
  };
  for (const k of given) {
    const v = r[k];
    const path = `${p}.${k}`;
    if (k === 'method') {
      const m = typeof v === 'string' ? v.toUpperCase() : '';
      if (!(HTTP_METHODS as readonly string[]).includes(m)) err(path, `must be one of ${HTTP_METHODS.join(', ')}`);
      else spec.plain.method = m as (typeof HTTP_METHODS)[number];
    } else if (k === 'headers') {
      spec.plain.headers = headerMap(path, v, err, (at, x) => {
        if (typeof x !== 'string') return void err(at, 'must be a string');
        if (x.includes('${')) return void err(at, 'is not expanded: a secret value goes in secretHeaders');
        return x;
      });
    } else if (k === 'secretHeaders') spec.secretHeaders = headerMap(path, v, err, secret);
    else if (k === 'body') text('body', MAX_REQUEST_BODY_BYTES);
    else if (k === 'contentType') text('contentType', 256);
    else if (k === 'auth') spec.auth = auth(path, v, err, secret);
    else if (k === 'clientCert' || k === 'clientKey') spec[k] = v === null ? null : secret(path, v);
    else if (k === 'followRedirects' || k === 'upsideDown') {
      if (typeof v !== 'boolean') err(path, 'must be true or false');
      else spec.plain[k] = v;
    } else if (k === 'timeoutSeconds') {
      if (v !== null && (!Number.isInteger(v) || (v as number) < 1 || (v as number) > 120))
        err(path, 'must be an integer from 1 to 120, or null');
      else spec.plain.timeoutSeconds = v as number | null;
    } else if (k === 'expectStatus') spec.plain.expectStatus = v === null ? null : statuses(path, v, err);
  }
  if ((r.clientCert === undefined) !== (r.clientKey === undefined) || (r.clientCert === null) !== (r.clientKey === null))
    err(`${p}.clientCert`, 'goes with clientKey (both, or both null)');
  return spec;
}

function auth(path: string, v: unknown, err: Err, secret: (path: string, v: unknown) => string | undefined): HttpCheckSpec['auth'] {
  if (v === null) return null;
  if (isObj(v) && v.type === 'basic') {
    for (const k of Object.keys(v))
      if (!['type', 'username', 'password'].includes(k)) err(`${path}.${k}`, 'unknown field (basic takes username, password)');
    if (typeof v.username !== 'string' || /[:\r\n]/.test(v.username)) err(`${path}.username`, 'must be a user name without a colon');
    const password = secret(`${path}.password`, v.password);
    return password === undefined ? undefined : { type: 'basic', username: v.username as string, password };
  }
  if (isObj(v) && v.type === 'bearer') {
    for (const k of Object.keys(v)) if (!['type', 'token'].includes(k)) err(`${path}.${k}`, 'unknown field (bearer takes token)');
    const token = secret(`${path}.token`, v.token);
    return token === undefined ? undefined : { type: 'bearer', token };
  }
  err(path, 'must be {type: basic, username, password} or {type: bearer, token}, or null');
  return undefined;
}

/** `[200, 301, "200-299"]` as the daemon shows them: strings. */
function statuses(path: string, v: unknown, err: Err): string[] | undefined {
  const items = Array.isArray(v) ? v.map(String) : [];
  if (items.length === 0 || items.length > 32 || !items.every(isStatusRange))
    return void err(path, 'must be a list of 1 to 32 status codes (100 to 599) and ranges like 200-299, or null');
  return items;
}
