import { HttpError, invalidField } from '../../src/errors.ts';
import { SLUG_RE } from '../../src/api/schemas/push.ts';
import type { PingKind } from '../../src/api/schemas/push.ts';

/**
 * The ping URLs (docs/API.md#push-checks): `/ping/{uuid}[/start|/fail|/log|/{exitCode}]` and
 * `/ping/{pingKey}/{slug}[/…]`. Parsed strictly, each segment percent-decoded once and then
 * matched whole, so that `..`, `%2e%2e`, `%2f` and double encodings are refused (400 naming the
 * part) rather than normalised into another path.
 */
export type PingRef = { uuid: string } | { key: string; slug: string };

export interface ParsedPing {
  ref: PingRef;
  kind: PingKind;
  /** `/{exitCode}` pings only; 0 is a success. */
  exitCode: number | null;
  /** `?create=1`: create an unknown slug when the key allows it. */
  create: boolean;
}

export const PING_PREFIX = '/ping';
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Ping keys are URL-safe random strings (never shaped like a uuid, which would read as one). */
const KEY_RE = /^[A-Za-z0-9_-]{16,64}$/;
const EXIT_RE = /^(?:0|[1-9][0-9]{0,2})$/;
const MAX_EXIT_CODE = 255;

/** The path of a request target without its query; an absolute-form target (`GET http://host/ping/…`) gives its path. */
export function pathOf(url: string): { path: string; query: string } {
  const target = url.replace(/^https?:\/\/[^/?#]*/i, '');
  const q = target.indexOf('?');
  return q < 0 ? { path: target, query: '' } : { path: target.slice(0, q), query: target.slice(q + 1) };
}

/** Whether a path is a ping path (`/ping` or under `/ping/`): those belong to monctl on every host. */
export function isPingPath(path: string): boolean {
  return path === PING_PREFIX || path.startsWith(`${PING_PREFIX}/`);
}

function decoded(segment: string, field: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw invalidField(field, 'is not valid percent-encoding');
  }
}

function suffixOf(raw: string | undefined): { kind: PingKind; exitCode: number | null } {
  if (raw === undefined) return { kind: 'success', exitCode: null };
  const s = decoded(raw, 'exitCode');
  if (s === 'start' || s === 'fail' || s === 'log') return { kind: s, exitCode: null };
  if (!EXIT_RE.test(s) || Number(s) > MAX_EXIT_CODE) {
    throw invalidField('exitCode', `must be start, fail, log or an exit code from 0 to ${MAX_EXIT_CODE}`);
  }
  const exitCode = Number(s);
  return { kind: exitCode === 0 ? 'success' : 'fail', exitCode };
}

/** Parses a ping path (`isPingPath` already true) and its query; throws a 400 naming the bad part. */
export function parsePing(path: string, query: string): ParsedPing {
  const parts = path.slice(PING_PREFIX.length + 1).split('/');
  const create = new URLSearchParams(query).get('create') === '1';
  const first = decoded(parts[0] ?? '', 'uuid');
  if (UUID_RE.test(first)) {
    if (parts.length > 2) throw invalidField('path', 'is /ping/{uuid} or /ping/{uuid}/{start|fail|log|exitCode}');
    return { ref: { uuid: first.toLowerCase() }, ...suffixOf(parts[1]), create };
  }
  if (!KEY_RE.test(first)) throw invalidField('uuid', 'is neither a UUID nor a ping key');
  if (parts.length < 2 || parts.length > 3) {
    throw invalidField('path', 'is /ping/{pingKey}/{slug} or /ping/{pingKey}/{slug}/{start|fail|log|exitCode}');
  }
  const slug = decoded(parts[1], 'slug');
  if (!SLUG_RE.test(slug)) throw invalidField('slug', 'is lower-case letters, digits, - and _ (at most 100)');
  return { ref: { key: first, slug }, ...suffixOf(parts[2]), create };
}

/** The methods a ping answers. */
export const PING_METHODS = ['GET', 'POST', 'HEAD'];

export function pingMethodNotAllowed(method: string | undefined): HttpError {
  return new HttpError(405, 'method-not-allowed', `${method} is not allowed on a ping URL`, {
    headers: { Allow: PING_METHODS.join(', ') },
  });
}
