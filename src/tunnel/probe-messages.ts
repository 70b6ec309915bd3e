/**
 * The two messages of a probe stream (src/tunnel/probe-protocol.ts), read defensively on both
 * sides: anything that is not a check (or an answer) as this side expects it is refused with a
 * sentence saying what is wrong, never a throw. The caps are at least the API's
 * (src/api/schemas/http-check.ts, src/probes/conditions/types.ts), kept here as plain numbers so
 * that the agent's bundle carries no schema library.
 */
import { MAX_CONDITION_LENGTH, MAX_CONDITIONS } from '../probes/conditions/types.ts';
import {
  type CheckReport,
  type CheckTiming,
  HTTP_METHODS,
  type HttpRequestSpec,
  type ProbeResult,
  type ResourceType,
} from '../probes/types.ts';
import type { RemoteAnswer, RemoteCheck } from './probe-protocol.ts';
import { parseCheckOptions } from './probe-options.ts';

/** Plain and secret headers together: 32 of each. */
const MAX_WIRE_HEADERS = 64;
const MAX_BODY_CHARS = 64 * 1024;
const MAX_PEM_CHARS = 65_536;
/** A resource's `timeoutSeconds` is 1 to 120; the daemon's `--http-timeout` may be longer, up to an hour. */
const MAX_TIMEOUT_MS = 3_600_000;
const MAX_BODY_BYTES_SETTING = 2 ** 30;
/** What a report's response may carry: a 4 KiB body excerpt (at most 4,096 characters) and the headers. */
const MAX_EXCERPT_CHARS = 4096;
const MAX_REPORT_HEADERS = 256;

/** Every probed type (src/probes/types.ts ResourceType); protocol 1 knew the first three. */
const TYPES = new Set<string>(['HTTP', 'TCP', 'DOCKER', 'DNS', 'PING', 'TLS', 'UDP', 'GRPC', 'WEBSOCKET', 'SSH'] satisfies ResourceType[]);
const PROTOCOL_1_TYPES = new Set<string>(['HTTP', 'TCP', 'DOCKER']);
const STATUSES = new Set(['AVAILABLE', 'NOT_AVAILABLE', 'UNKNOWN']);
const METHODS = new Set<string>(HTTP_METHODS);
const isString = (v: unknown, max: number): v is string => typeof v === 'string' && v.length <= max;
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0;
const isInt = (v: unknown, min: number, max: number): v is number => Number.isInteger(v) && (v as number) >= min && (v as number) <= max;
/** No CR, LF or NUL: a header value must not end the header it is written in. */
const isHeaderText = (v: unknown, max: number): v is string => isString(v, max) && !/[\r\n\0]/.test(v);
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What a check asks beyond protocol 1, in words (for the location's `unknown` at an older agent); empty: protocol 1 will do. */
export function protocol2Needs(check: RemoteCheck): string[] {
  const needs: string[] = [];
  if (!PROTOCOL_1_TYPES.has(check.type)) needs.push(`${check.type} checks`);
  if (check.options) needs.push(`${check.type} options`);
  if (check.conditions?.length) needs.push('conditions');
  if (check.http) needs.push('request fields');
  if (check.checkTimeoutMs !== undefined) needs.push('its own timeout');
  if (check.upsideDown) needs.push('upside-down');
  if (check.report) needs.push('a report');
  return needs;
}

/** Validates a check received from the daemon on a stream of `version`; a string says what is wrong. */
export function parseRemoteCheck(value: unknown, version = 1): RemoteCheck | string {
  if (!isRecord(value)) return 'the check is not an object';
  const v = value;
  if (!TYPES.has(v.type as string)) return `type must be one of ${[...TYPES].join(', ')}`;
  if (!isString(v.target, 2048) || !v.target) return 'target must be a string of 1 to 2048 characters';
  if (typeof v.skipTLS !== 'boolean' || typeof v.recursive !== 'boolean') return 'skipTLS and recursive must be booleans';
  if (!isInt(v.timeoutMs, 1, MAX_TIMEOUT_MS)) return `timeoutMs must be 1 to ${MAX_TIMEOUT_MS}`;
  const check: RemoteCheck = {
    type: v.type as ResourceType,
    target: v.target,
    skipTLS: v.skipTLS,
    recursive: v.recursive,
    timeoutMs: v.timeoutMs,
  };
  if (v.credential !== undefined) {
    const c = v.credential;
    if (!isRecord(c) || !isString(c.registry, 512) || !isString(c.username, 1024) || !isString(c.password, 8192))
      return 'credential must hold registry, username and password';
    check.credential = { registry: c.registry, username: c.username, password: c.password };
  }
  const problem = parseProtocol2(v, check);
  if (problem) return problem;
  // A stream of protocol 1 judging by fields of protocol 2 would be a daemon bug; refused rather than half-honoured.
  if (version < 2 && protocol2Needs(check).length) return `${protocol2Needs(check).join(', ')} need probe protocol 2`;
  return check;
}

/** The fields protocol 2 adds to a check, onto `check`; a string says what is wrong. */
function parseProtocol2(v: Record<string, unknown>, check: RemoteCheck): string | undefined {
  if (v.resourceId !== undefined) {
    if (!isInt(v.resourceId, 0, Number.MAX_SAFE_INTEGER)) return 'resourceId must be a whole number';
    check.resourceId = v.resourceId;
  }
  if (v.conditions !== undefined) {
    const list = v.conditions;
    if (!Array.isArray(list) || list.length > MAX_CONDITIONS || !list.every((c) => isString(c, MAX_CONDITION_LENGTH)))
      return `conditions must be at most ${MAX_CONDITIONS} strings of at most ${MAX_CONDITION_LENGTH} characters`;
    check.conditions = list;
  }
  if (v.http !== undefined) {
    if (check.type !== 'HTTP') return 'http is for HTTP checks only';
    const http = parseHttpSpec(v.http);
    if (typeof http === 'string') return `http.${http}`;
    check.http = http;
  }
  if (v.options !== undefined) {
    const options = parseCheckOptions(check.type, v.options);
    if (typeof options === 'string') return options;
    check.options = options;
  }
  if (v.checkTimeoutMs !== undefined) {
    if (!isInt(v.checkTimeoutMs, 1, MAX_TIMEOUT_MS)) return `checkTimeoutMs must be 1 to ${MAX_TIMEOUT_MS}`;
    check.checkTimeoutMs = v.checkTimeoutMs;
  }
  if (v.maxBodyBytes !== undefined) {
    if (!isInt(v.maxBodyBytes, 1, MAX_BODY_BYTES_SETTING)) return `maxBodyBytes must be 1 to ${MAX_BODY_BYTES_SETTING}`;
    check.maxBodyBytes = v.maxBodyBytes;
  }
  for (const flag of ['upsideDown', 'report'] as const) {
    if (v[flag] === undefined) continue;
    if (typeof v[flag] !== 'boolean') return `${flag} must be a boolean`;
    if (v[flag]) check[flag] = true;
  }
  return undefined;
}

/** An HttpRequestSpec as the daemon sends it; a string names the field that is wrong. */
function parseHttpSpec(value: unknown): HttpRequestSpec | string {
  if (!isRecord(value)) return 'http must be an object';
  const v = value;
  if (!METHODS.has(v.method as string)) return `method must be one of ${HTTP_METHODS.join(', ')}`;
  const headers = v.headers;
  if (
    !Array.isArray(headers) ||
    headers.length > MAX_WIRE_HEADERS ||
    !headers.every(
      (h) => Array.isArray(h) && h.length === 2 && /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/.test(String(h[0])) && isHeaderText(h[1], 8192),
    )
  )
    return `headers must be at most ${MAX_WIRE_HEADERS} [name, value] pairs of HTTP tokens and values without CR, LF or NUL`;
  if (v.body !== null && !isString(v.body, MAX_BODY_CHARS)) return `body must be null or text of at most ${MAX_BODY_CHARS} characters`;
  if (v.contentType !== null && !isHeaderText(v.contentType, 256)) return 'contentType must be null or a header value';
  const auth = parseAuth(v.auth);
  if (auth === undefined) return 'auth must be null, basic {username, password} or bearer {token}';
  const cert = v.clientCert;
  if (cert !== null && !(isRecord(cert) && isString(cert.cert, MAX_PEM_CHARS) && isString(cert.key, MAX_PEM_CHARS)))
    return 'clientCert must be null or {cert, key} (PEM)';
  if (typeof v.followRedirects !== 'boolean') return 'followRedirects must be a boolean';
  const secret = v.secretHeaders;
  if (
    secret !== undefined &&
    !(
      Array.isArray(secret) &&
      secret.length <= MAX_WIRE_HEADERS &&
      secret.every((n) => /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/.test(String(n)))
    )
  )
    return `secretHeaders must be at most ${MAX_WIRE_HEADERS} header names`;
  const expect = v.expectStatus;
  if (expect !== null && !(Array.isArray(expect) && expect.length <= 32 && expect.every(isStatusRange)))
    return 'expectStatus must be null or at most 32 [from, to] ranges of statuses 100 to 599';
  return {
    method: v.method as HttpRequestSpec['method'],
    headers: headers.map(([name, value]) => [name as string, value as string]),
    ...(secret === undefined ? {} : { secretHeaders: (secret as unknown[]).map(String) }),
    body: v.body as string | null,
    contentType: v.contentType as string | null,
    auth,
    clientCert: cert === null ? null : { cert: (cert as { cert: string }).cert, key: (cert as { key: string }).key },
    followRedirects: v.followRedirects,
    expectStatus: expect === null ? null : (expect as [number, number][]).map(([from, to]) => [from, to]),
  };
}

function parseAuth(a: unknown): HttpRequestSpec['auth'] | undefined {
  if (a === null) return null;
  if (!isRecord(a)) return undefined;
  if (a.type === 'basic' && isHeaderText(a.username, 256) && !a.username.includes(':') && isString(a.password, 1024))
    return { type: 'basic', username: a.username, password: a.password };
  if (a.type === 'bearer' && isHeaderText(a.token, 8192) && a.token) return { type: 'bearer', token: a.token };
  return undefined;
}

function isStatusRange(r: unknown): boolean {
  return Array.isArray(r) && r.length === 2 && isInt(r[0], 100, 599) && isInt(r[1], r[0] as number, 599);
}

/** Validates the agent's answer; undefined when it is not one. */
export function parseRemoteAnswer(value: unknown): RemoteAnswer | undefined {
  if (!isRecord(value)) return undefined;
  const v = value;
  if (!STATUSES.has(v.status as string) || !isString(v.message, 16_384)) return undefined;
  if (v.errorCode !== null && !isString(v.errorCode, 64)) return undefined;
  if (!isCount(v.durationMs) || !isCount(v.waitedMs)) return undefined;
  const answer: RemoteAnswer = {
    status: v.status as ProbeResult['status'],
    message: v.message,
    errorCode: v.errorCode as string | null,
    durationMs: Math.round(v.durationMs),
    waitedMs: Math.round(v.waitedMs),
  };
  if (isCount(v.certNotAfter)) answer.certNotAfter = v.certNotAfter;
  if (v.timing !== undefined) {
    const timing = parseTiming(v.timing);
    if (!timing) return undefined;
    answer.timing = timing;
  }
  if (v.report !== undefined) {
    const report = parseReport(v.report);
    if (!report) return undefined;
    answer.report = report;
  }
  return answer;
}

function parseTiming(value: unknown): CheckTiming | undefined {
  if (!isRecord(value) || !isCount(value.totalMs)) return undefined;
  const phase = (p: unknown) => (p === null || p === undefined ? null : isCount(p) ? p : undefined);
  const [dnsMs, connectMs, tlsMs, firstByteMs] = [value.dnsMs, value.connectMs, value.tlsMs, value.firstByteMs].map(phase);
  if (dnsMs === undefined || connectMs === undefined || tlsMs === undefined || firstByteMs === undefined) return undefined;
  return { dnsMs, connectMs, tlsMs, firstByteMs, totalMs: value.totalMs };
}

function parseReport(value: unknown): CheckReport | undefined {
  if (!isRecord(value) || !Array.isArray(value.conditions) || value.conditions.length > MAX_CONDITIONS) return undefined;
  const conditions: CheckReport['conditions'] = [];
  for (const c of value.conditions) {
    if (!isRecord(c) || !isString(c.condition, MAX_CONDITION_LENGTH) || typeof c.ok !== 'boolean' || !isString(c.message, 4096))
      return undefined;
    conditions.push({ condition: c.condition, ok: c.ok, message: c.message });
  }
  const r = value.response;
  if (r === null) return { conditions, response: null };
  if (!isRecord(r) || !isInt(r.status, 0, 999) || !isString(r.statusText, 1024) || !isString(r.body, MAX_EXCERPT_CHARS)) return undefined;
  if (typeof r.bodyTruncated !== 'boolean' || !isRecord(r.headers)) return undefined;
  const entries = Object.entries(r.headers);
  if (entries.length > MAX_REPORT_HEADERS) return undefined;
  const headers: Record<string, string | string[]> = {};
  for (const [name, h] of entries) {
    if (isString(h, 16_384)) headers[name] = h;
    else if (Array.isArray(h) && h.length <= 64 && h.every((x) => isString(x, 16_384))) headers[name] = h as string[];
    else return undefined;
  }
  return { conditions, response: { status: r.status, statusText: r.statusText, headers, body: r.body, bodyTruncated: r.bodyTruncated } };
}
