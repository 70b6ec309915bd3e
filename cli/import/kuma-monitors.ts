import { DNS_RECORD_TYPES } from '../../src/api/kinds.ts';
import { addGroup, clampInterval, type Draft, envName, keepConditions, secret, slug } from './draft.ts';

/**
 * Uptime Kuma's monitors (its backup's `monitorList`, each as Monitor.toJSON writes it with the
 * sensitive data) as `resources:` entries. A monitor type monctl does not check goes to the
 * report, named by id, name and type, with the reason.
 */
export type KumaMonitor = Record<string, unknown> & { id: number; name: string; type: string };
type Obj = Record<string, unknown>;

const UNMAPPED: Record<string, string> = {
  docker: "monctl's DOCKER checks that an image can be pulled from a registry, not that a container runs on a Docker host",
  'grpc-keyword': "monctl's GRPC checks the gRPC health service, not a method's answer",
  'real-browser': 'monctl has no browser check',
  'tailscale-ping': 'monctl has no Tailscale check',
};
const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v : undefined);
const SECRET_HEADER = /authorization|cookie|token|secret|key|password|auth/i;

/** `$.a.b[0]`, `a.b` and `a[0].b` (the JSONata paths that are plain paths) as Gatus's `[BODY].a.b[0]`. */
function bodyPath(expr: string): string | undefined {
  const path = expr.trim().replace(/^\$\.?/, '');
  if (path === '') return '[BODY]';
  return /^[A-Za-z_][A-Za-z0-9_-]*(\[\d+\])*(\.[A-Za-z_][A-Za-z0-9_-]*(\[\d+\])*)*$/.test(path) ? `[BODY].${path}` : undefined;
}

/** The HTTP request fields of an http, keyword or json-query monitor. */
function httpFields(d: Draft, m: KumaMonitor, who: string, r: Obj): void {
  const method = str(m.method)?.toUpperCase();
  if (method && method !== 'GET') r.method = method;
  const headersText = str(m.headers);
  if (headersText) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(headersText);
    } catch {
      d.report.push(`${who}: headers left out: not JSON`);
    }
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
      const plain: Record<string, string> = {};
      const hidden: Record<string, string> = {};
      for (const [name, value] of Object.entries(parsed as Obj)) {
        if (SECRET_HEADER.test(name)) hidden[name] = secret(d, envName('KUMA', m.name, name), `header ${name} of monitor ${m.id}`);
        else plain[name] = String(value);
      }
      if (Object.keys(plain).length) r.headers = plain;
      if (Object.keys(hidden).length) r.secretHeaders = hidden;
    }
  }
  const body = str(m.body);
  if (body && method !== 'HEAD') {
    r.body = body;
    const typed = Object.keys({ ...(r.headers as Obj), ...(r.secretHeaders as Obj) }).some((h) => h.toLowerCase() === 'content-type');
    const encoding = str(m.httpBodyEncoding) ?? 'json';
    if (!typed)
      r.contentType =
        encoding === 'xml' ? 'application/xml' : encoding === 'form' ? 'application/x-www-form-urlencoded' : 'application/json';
  }
  // Kuma sends basic credentials only when authMethod is 'basic' (null is no authentication, and
  // the user name a form once held stays in the backup).
  if (m.authMethod === 'basic' && str(m.basic_auth_user))
    r.auth = {
      type: 'basic',
      username: m.basic_auth_user,
      password: secret(d, envName('KUMA', m.name, 'password'), `basic auth password of monitor ${m.id}`),
    };
  else if (str(m.authMethod) && m.authMethod !== 'basic')
    d.report.push(`${who}: ${m.authMethod} authentication left out: monctl sends basic or bearer only`);
  const codes = Array.isArray(m.accepted_statuscodes) ? m.accepted_statuscodes.map(String) : [];
  if (codes.length && !(codes.length === 1 && codes[0] === '200-299')) r.expectStatus = codes;
  if (m.maxredirects === 0) r.followRedirects = false;
  else if (typeof m.maxredirects === 'number' && m.maxredirects !== 10)
    d.report.push(`${who}: max redirects ${m.maxredirects} not kept: monctl follows up to 10`);
  if (m.ignoreTls === true) r.skipTLS = true;
}

/** One monitor as a resource (undefined, with a report line, when it has no equivalent). */
export function mapMonitor(d: Draft, m: KumaMonitor, groupsOf: (m: KumaMonitor) => string[]): Obj | undefined {
  const who = `monitor ${m.id} "${m.name}" (${m.type})`;
  const refuse = (reason: string) => void d.report.push(`${who}: ${reason}`);
  if (UNMAPPED[m.type]) return refuse(UNMAPPED[m.type]);
  const r: Obj = { name: m.name };
  const host = str(m.hostname);
  const hostPort = () => `${host?.includes(':') ? `[${host}]` : host}:${m.port}`;
  if (m.type === 'http' || m.type === 'keyword' || m.type === 'json-query') {
    if (!str(m.url) || !/^https?:\/\//i.test(m.url as string)) return refuse('the URL is not http(s)');
    Object.assign(r, { type: 'HTTP', target: m.url });
    httpFields(d, m, who, r);
    if (m.type === 'keyword') {
      const keyword = str(m.keyword);
      if (!keyword || /[*\n]/.test(keyword))
        return refuse('the keyword is empty or holds * or a line break, which pat() cannot match literally');
      r.conditions = [`[BODY] ${m.invertKeyword ? '!=' : '=='} pat(*${keyword}*)`];
    } else if (m.type === 'json-query') {
      const path = str(m.jsonPath) ? bodyPath(m.jsonPath as string) : undefined;
      if (!path) return refuse(`the JSON query "${m.jsonPath}" is a JSONata expression, not a plain path`);
      const op = str(m.jsonPathOperator) ?? '==';
      if (!['==', '!=', '<', '<=', '>', '>='].includes(op)) return refuse(`the JSON query operator ${op} has no condition equivalent`);
      r.conditions = keepConditions(d, who, 'HTTP', [`${path} ${op} ${m.expectedValue}`]);
    }
  } else if (m.type === 'port') {
    if (!host || !m.port) return refuse('no host or port');
    Object.assign(r, { type: 'TCP', target: hostPort() });
  } else if (m.type === 'ping') {
    if (!host) return refuse('no host');
    Object.assign(r, { type: 'PING', target: host });
  } else if (m.type === 'dns') {
    if (!host) return refuse('no host');
    const recordType = str(m.dns_resolve_type) ?? 'A';
    if (!(DNS_RECORD_TYPES as readonly string[]).includes(recordType))
      return refuse(`monctl's DNS check does not ask for ${recordType} records`);
    const server = str(m.dns_resolve_server)?.split(',')[0].trim();
    const port = typeof m.port === 'number' && m.port !== 53 ? `:${m.port}` : '';
    Object.assign(r, { type: 'DNS', target: host, dns: { recordType, ...(server ? { resolver: `${server}${port}` } : {}) } });
  } else if (m.type === 'push') {
    Object.assign(r, { type: 'PUSH', target: slug(m.name), periodSeconds: clampInterval(Number(m.interval) || 60) });
    d.report.push(`${who}: its push URL changes: point the job at monctl's ping URL for ${slug(m.name)}`);
  } else return refuse(`monctl has no check for ${m.type} monitors`);
  if (r.type !== 'PUSH') {
    if (typeof m.interval === 'number') r.intervalSeconds = clampInterval(m.interval);
    if (typeof m.timeout === 'number' && m.timeout > 0) r.timeoutSeconds = Math.min(120, Math.max(1, Math.round(m.timeout)));
  }
  if (typeof m.maxretries === 'number' && m.maxretries > 0) r.failureThreshold = Math.min(100, m.maxretries + 1);
  if (m.upsideDown === true) r.upsideDown = true;
  if (m.proxyId ?? m.proxy_id) d.report.push(`${who}: its proxy left out: monctl checks directly`);
  if (m.active === false || m.active === 0) r.active = false;
  const groups = groupsOf(m);
  for (const g of groups) addGroup(d, g);
  if (groups.length) r.groups = groups;
  return r;
}
