import { sameSso } from './routes-sso.ts';
import ipaddr from 'ipaddr.js';
import type { Agent, Route, RouteCreate, RouteUpdate } from '../../src/api/schemas/tunnel.ts';
import { MonctlError } from '../../src/errors.ts';
import { ops } from '../api/ops.ts';
import type { Runtime } from '../runtime.ts';
import type { RouteSpec } from './routes-spec.ts';
import type { Spec } from './spec.ts';
import type { Step } from './step.ts';

/**
 * The steps that make the daemon's agents and routes match the file, by name. Agents come first (a
 * route's pool names them), route deletions and then agent deletions last (an agent's deletion takes
 * the routes it served alone with it, so the plan says which). Every field the file gives is compared
 * with the daemon's in the daemon's own normal form, so that applying a file twice changes nothing;
 * basic-auth passwords cannot be compared (reads never return them) and are sent again, as
 * notifiers' secrets are.
 */
export interface TunnelSteps {
  creates: Step[];
  upserts: Step[];
  deletions: Step[];
  /** Agent names on the server or created by the file (resources' locations may name them). */
  agentNames: Set<string>;
}

export async function tunnelSteps(rt: Runtime, spec: Spec, prune: boolean): Promise<TunnelSteps> {
  const c = rt.client;
  const pruneAgents = prune && spec.managesAgents;
  const pruneRoutes = prune && spec.managesRoutes;
  const needed = spec.agents.length > 0 || spec.routes.length > 0 || pruneAgents || pruneRoutes;
  const [agents, routes] = needed ? await Promise.all([c.call(ops.listAgents), c.call(ops.listRoutes)]) : [[], []];
  const ids = new Map(agents.map((a) => [a.name, a.id]));
  const names = new Map(agents.map((a) => [a.id, a.name]));
  const inFile = new Set(spec.agents.map((a) => a.name));

  const problems = spec.routes.flatMap((r) =>
    r.agents.flatMap(({ name }) =>
      !inFile.has(name) && !ids.has(name)
        ? [`  routes ${r.name}: agent "${name}" is neither in the file nor on the server`]
        : pruneAgents && !inFile.has(name)
          ? [`  routes ${r.name}: agent "${name}" would be pruned (add it to the file's agents)`]
          : [],
    ),
  );
  if (problems.length) throw new MonctlError('invalid-file', `the file is invalid; nothing was changed:\n${problems.join('\n')}`);

  const creates: Step[] = spec.agents
    .filter((a) => !ids.has(a.name))
    .map((a) => ({
      action: 'create',
      kind: 'agent',
      name: a.name,
      run: async () => {
        const made = await c.call(ops.createAgent, { body: { name: a.name } });
        ids.set(made.name, made.id);
      },
    }));

  // Resolved when the step runs: the file's new agents have ids only then.
  const pool = (r: RouteSpec) => r.agents.map((a) => ({ agentId: ids.get(a.name)!, target: a.target }));
  const upserts: Step[] = [];
  for (const r of spec.routes) {
    const cur = routes.find((x) => x.name === r.name);
    if (!cur) {
      upserts.push({
        action: 'create',
        kind: 'route',
        name: r.name,
        run: async () => void (await c.call(ops.createRoute, { body: { ...bodyOf(r), agents: pool(r) } as RouteCreate })),
      });
      continue;
    }
    const changes = routeChanges(r, cur, names);
    const secrets = Boolean(r.basicUsers?.some((u) => u.password !== undefined));
    if (changes.length === 0 && !secrets) continue;
    upserts.push({
      action: 'update',
      kind: 'route',
      name: r.name,
      changes: secrets ? [...changes, 'passwords sent'] : changes,
      secretsOnly: changes.length === 0,
      run: async () => {
        const all = bodyOf(r) as Record<string, unknown>;
        // A change of type drops the old type's fields: the new type's are all sent.
        const fields = changes.includes('type') ? Object.keys(all) : [...changes, ...(secrets ? ['basicUsers'] : [])];
        const body = Object.fromEntries(fields.filter((k) => k in all).map((k) => [k, all[k]])) as RouteUpdate;
        if (changes.includes('agents') || changes.includes('type')) body.agents = pool(r);
        await c.call(ops.updateRoute, { params: { id: cur.id }, body });
      },
    });
  }

  const keepRoutes = new Set(spec.routes.map((r) => r.name));
  const deletions: Step[] = pruneRoutes
    ? routes
        .filter((r) => !keepRoutes.has(r.name))
        .map((r) => ({
          action: 'delete',
          kind: 'route',
          name: r.name,
          run: async () => void (await c.call(ops.deleteRoute, { params: { id: r.id } })),
        }))
    : [];
  if (pruneAgents) deletions.push(...agentDeletions(rt, agents, routes, spec, pruneRoutes));
  return { creates, upserts, deletions, agentNames: new Set([...ids.keys(), ...inFile]) };
}

/** Deleting an agent deletes the routes it serves alone: those the file keeps (or does not prune) are named in the plan. */
function agentDeletions(rt: Runtime, agents: Agent[], routes: Route[], spec: Spec, pruneRoutes: boolean): Step[] {
  const keep = new Set(spec.agents.map((a) => a.name));
  const rePooled = new Set(spec.routes.map((r) => r.name));
  return agents
    .filter((a) => !keep.has(a.name))
    .map((a) => {
      const lost = routes
        .filter((r) => r.agents.length === 1 && r.agents[0].agentId === a.id && !rePooled.has(r.name) && !pruneRoutes)
        .map((r) => r.name);
      return {
        action: 'delete' as const,
        kind: 'agent' as const,
        name: a.name,
        ...(lost.length ? { changes: [`its routes go: ${lost.join(', ')}`] } : {}),
        run: async () => void (await rt.client.call(ops.deleteAgent, { params: { id: a.id } })),
      };
    });
}

/** The API body of the file's fields (the pool apart: it needs ids). */
function bodyOf(r: RouteSpec): Omit<RouteCreate, 'agents'> {
  const { agents: _pool, ...rest } = r;
  return Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)) as Omit<RouteCreate, 'agents'>;
}

/** Keys sorted at every level, and empty rule parts dropped: the daemon's JSON against the file's. */
function canonical(v: unknown): string {
  const norm = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(norm);
    if (x === null || typeof x !== 'object') return x;
    const entries = Object.entries(x)
      .filter(([, y]) => y !== undefined && !(Array.isArray(y) && y.length === 0) && !isEmptyObject(y))
      .sort(([a], [b]) => a.localeCompare(b));
    return Object.fromEntries(entries.map(([k, y]) => [k, norm(y)]));
  };
  return JSON.stringify(norm(v));
}
const isEmptyObject = (y: unknown) => typeof y === 'object' && y !== null && !Array.isArray(y) && Object.keys(y).length === 0;

/** `10.1.2.3/8` as the daemon stores it, `10.0.0.0/8`; a bare address is its /32 or /128. */
function cidr(text: string): string {
  try {
    const [addr, bits] = text.includes('/') ? ipaddr.parseCIDR(text.trim()) : [ipaddr.parse(text.trim()), -1];
    const width = bits < 0 ? (addr.kind() === 'ipv4' ? 32 : 128) : bits;
    const net =
      addr.kind() === 'ipv4'
        ? ipaddr.IPv4.networkAddressFromCIDR(`${addr}/${width}`)
        : ipaddr.IPv6.networkAddressFromCIDR(`${addr}/${width}`);
    return `${net}/${width}`;
  } catch {
    return text;
  }
}

const SCALARS = [
  'type',
  'target',
  'policy',
  'affinity',
  'pathPrefix',
  'listenPort',
  'enabled',
  'allowEncodedSlashes',
  'auth',
  'httpsRedirect',
  'hostHeader',
  'preserveHost',
  'stripPrefix',
] as const;

/** The fields of the file that differ from the route on the daemon. */
export function routeChanges(r: RouteSpec, cur: Route, names: Map<number, string>): string[] {
  const changes: string[] = SCALARS.filter((k) => r[k] !== undefined && r[k] !== cur[k]);
  const pool = cur.agents.map((a) => ({ name: names.get(a.agentId) ?? String(a.agentId), target: a.target }));
  if (JSON.stringify(r.agents) !== JSON.stringify(pool)) changes.push('agents');
  const host = (h: string | null) => h?.toLowerCase().replace(/\.$/, '');
  if (r.hostname !== undefined && host(r.hostname) !== host(cur.hostname)) changes.push('hostname');
  const blocks = (list: string[]) => canonical([...new Set(list.map(cidr))].sort());
  for (const k of ['ipAllow', 'ipDeny'] as const) if (r[k] !== undefined && blocks(r[k]) !== blocks(cur[k])) changes.push(k);
  for (const k of ['rateLimit', 'requestHeaders', 'responseHeaders', 'healthCheck'] as const)
    if (r[k] !== undefined && canonical(r[k]) !== canonical(cur[k])) changes.push(k);
  const users = (list: string[]) => [...list].sort().join('\n');
  if (r.basicUsers !== undefined && users(r.basicUsers.map((u) => u.username)) !== users(cur.basicUsers)) changes.push('basicUsers');
  if (r.sso !== undefined && !sameSso(r.sso, cur.sso)) changes.push('sso');
  return changes;
}
