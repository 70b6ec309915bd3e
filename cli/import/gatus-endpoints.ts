import { DNS_RECORD_TYPES } from '../../src/api/kinds.ts';
import { parseGoDuration } from '../../src/probes/conditions/go-values.ts';
import type { ConditionedType } from '../../src/probes/conditions/placeholders.ts';
import { addGroup, clampInterval, type Draft, envName, keepConditions, secret } from './draft.ts';

/**
 * A Gatus endpoint as a `resources:` entry: the URL's scheme picks the type (http(s), tcp, udp,
 * icmp, tls, starttls, ws(s), ssh; a DNS endpoint is its resolver with `dns.query-name`), the
 * conditions carry over as written (monctl reads Gatus's syntax), each one the type cannot answer
 * going to the report.
 */
type Obj = Record<string, unknown>;
const SECRET_HEADER = /authorization|cookie|token|secret|key|password/i;

/** Gatus durations (`30s`, `5m`) in whole seconds; undefined when absent or not one. */
export function seconds(v: unknown): number | undefined {
  if (typeof v !== 'string') return undefined;
  const ms = parseGoDuration(v);
  return ms === null || ms <= 0 ? undefined : Math.round(ms / 1000);
}

/** The type and target of a URL, or the reason it has none. */
function typeOf(e: Obj): { type: ConditionedType; target: string; extra?: Obj } | string {
  const url = String(e.url ?? '');
  const dns = e.dns as Obj | undefined;
  if (dns) {
    const recordType = String(dns['query-type'] ?? 'A').toUpperCase();
    if (!(DNS_RECORD_TYPES as readonly string[]).includes(recordType)) return `monctl's DNS check does not ask for ${recordType} records`;
    const resolver = url.replace(/^[a-z]+:\/\//i, '');
    return { type: 'DNS', target: String(dns['query-name'] ?? '').replace(/\.$/, ''), extra: { dns: { recordType, resolver } } };
  }
  const m = /^([a-z]+):\/\/(.+)$/i.exec(url);
  if (!m) return `the URL "${url}" has no scheme monctl checks`;
  const [, scheme, rest] = [m[0], m[1].toLowerCase(), m[2]];
  if (scheme === 'http' || scheme === 'https') return { type: 'HTTP', target: url };
  if (scheme === 'ws' || scheme === 'wss') return { type: 'WEBSOCKET', target: url };
  if (scheme === 'tcp') return { type: 'TCP', target: rest };
  if (scheme === 'udp') return { type: 'UDP', target: rest };
  if (scheme === 'icmp') return { type: 'PING', target: rest };
  if (scheme === 'tls') return { type: 'TLS', target: rest };
  if (scheme === 'starttls') return { type: 'TLS', target: rest, extra: { tls: { starttls: 'smtp' } } };
  if (scheme === 'ssh') return { type: 'SSH', target: rest };
  // Gatus's grpc:// and grpcs:// ask the server's health service (grpc.health.v1, service '').
  if (scheme === 'grpc' || scheme === 'grpcs')
    return { type: 'GRPC', target: rest, extra: { grpc: { service: '', tls: scheme === 'grpcs' } } };
  return `monctl has no ${scheme} check`;
}

/** One endpoint as a resource; undefined (and a report line) when its URL has no equivalent. */
export function mapEndpoint(d: Draft, e: Obj, name: string): Obj | undefined {
  const who = `endpoint "${name}"`;
  const kind = typeOf(e);
  if (typeof kind === 'string') return void d.report.push(`${who}: ${kind}`);
  const r: Obj = { name, type: kind.type, target: kind.target, ...kind.extra };
  const interval = seconds(e.interval);
  r.intervalSeconds = clampInterval(interval ?? 60);
  if (typeof e.group === 'string' && e.group) r.groups = [addGroup(d, e.group)];
  if (e.enabled === false) r.active = false;
  const client = (e.client ?? {}) as Obj;
  const timeout = seconds(client.timeout);
  if (timeout !== undefined) r.timeoutSeconds = Math.min(120, Math.max(1, timeout));
  if (client.insecure === true) {
    if (['HTTP', 'TLS', 'WEBSOCKET', 'TCP', 'GRPC'].includes(kind.type)) r.skipTLS = true;
    else d.report.push(`${who}: client.insecure left out: a ${kind.type} check makes no TLS connection`);
  }
  if (kind.type === 'HTTP') {
    const method = typeof e.method === 'string' ? e.method.toUpperCase() : 'GET';
    if (method !== 'GET') r.method = method;
    if (typeof e.body === 'string' && e.body !== '') r.body = e.body;
    const headers = (e.headers ?? {}) as Record<string, unknown>;
    const plain: Record<string, string> = {};
    const hidden: Record<string, string> = {};
    for (const [h, v] of Object.entries(headers)) {
      if (SECRET_HEADER.test(h)) hidden[h] = secret(d, envName('GATUS', name, h), `header ${h} of endpoint ${name}`);
      else plain[h] = String(v);
    }
    if (Object.keys(plain).length) r.headers = plain;
    if (Object.keys(hidden).length) r.secretHeaders = hidden;
    if (client['ignore-redirect'] === true) r.followRedirects = false;
  } else if (e.body !== undefined && kind.type !== 'TCP' && kind.type !== 'UDP')
    d.report.push(`${who}: body left out: only HTTP sends one`);
  else if (typeof e.body === 'string' && e.body !== '')
    r[kind.type.toLowerCase()] = kind.type === 'UDP' ? { send: e.body } : { send: e.body };
  if (kind.type === 'SSH' && e.ssh && typeof e.ssh === 'object')
    d.report.push(`${who}: ssh login left out: monctl's SSH check reads the server's identification, it does not log in or run the body`);
  const conditions = Array.isArray(e.conditions) ? e.conditions.map(String) : [];
  const kept = keepConditions(d, who, kind.type, conditions);
  if (kept.length) r.conditions = kept;
  return r;
}
