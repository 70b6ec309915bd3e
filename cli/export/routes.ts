import type { Route } from '../../src/api/schemas/tunnel.ts';
import type { Placeholders } from './secrets.ts';
import { sortedKeys } from './resources.ts';

type Obj = Record<string, unknown>;

/**
 * One `routes:` entry (cli/apply/routes-spec.ts): the pool by agent names, in order (a member
 * without a target of its own is its bare name), and the access rules. Each basic-auth user gets a
 * password placeholder: a user left without one keeps the stored hash on the daemon it came from,
 * but a new daemon needs it, and the same file should do for both.
 */
export function routeEntry(r: Route, agentNames: Map<number, string>, env: Placeholders): Obj {
  const out: Obj = { name: r.name, type: r.type };
  out.agents = r.agents.map((a) => {
    const name = agentNames.get(a.agentId) ?? String(a.agentId);
    return a.target === null ? name : { name, target: a.target };
  });
  out.target = r.target;
  out.policy = r.policy;
  out.affinity = r.affinity;
  if (r.type === 'TCP') out.listenPort = r.listenPort;
  else {
    out.hostname = r.hostname;
    if (r.pathPrefix !== null) out.pathPrefix = r.pathPrefix;
  }
  out.enabled = r.enabled;
  if (r.type === 'HTTP') {
    out.auth = r.auth;
    if (r.basicUsers.length)
      out.basicUsers = [...r.basicUsers].sort().map((u) => ({ username: u, password: env.ref('ROUTE', r.name, 'USER', u, 'PASSWORD') }));
    if (r.sso)
      out.sso = { ...r.sso, emails: [...r.sso.emails].sort(), domains: [...r.sso.domains].sort(), groups: [...r.sso.groups].sort() };
    out.httpsRedirect = r.httpsRedirect;
    out.allowEncodedSlashes = r.allowEncodedSlashes;
    if (r.hostHeader !== null) out.hostHeader = r.hostHeader;
    out.preserveHost = r.preserveHost;
    out.stripPrefix = r.stripPrefix;
    if (hasRules(r.requestHeaders)) out.requestHeaders = rules(r.requestHeaders);
    if (hasRules(r.responseHeaders)) out.responseHeaders = rules(r.responseHeaders);
  }
  out.ipAllow = [...r.ipAllow].sort();
  out.ipDeny = [...r.ipDeny].sort();
  out.rateLimit = r.rateLimit;
  out.healthCheck = r.healthCheck;
  return out;
}

const hasRules = (h: Obj) =>
  Object.values(h).some((v) => v !== undefined && (Array.isArray(v) ? v.length > 0 : Object.keys(v ?? {}).length > 0));
/** Header rules with their parts in a stable order (the apply comparison ignores order of keys). */
const rules = (h: Obj): Obj =>
  sortedKeys(
    Object.fromEntries(
      Object.entries(h)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => [k, Array.isArray(v) ? v : typeof v === 'object' && v !== null ? sortedKeys(v as Obj) : v]),
    ),
  );
