import type { PoolMember } from '../../src/api/schemas/route-pools.ts';
import type { Route, Topology } from '../../src/api/schemas/tunnel.ts';
import { shares } from './traffic-share.ts';

/**
 * Route pools in the live topology (docs/API.md#agent-pools): how each event
 * moves a pool member, and the pool lines of the tree. The snapshot carries
 * every route's `pool`; events carry ids and verdicts, applied here.
 */
type TopoRoute = Topology['routes'][number];
type Edge = Topology['edges'][number];

const inRotation = (m: Pick<PoolMember, 'connected' | 'health'>) => m.connected && m.health !== 'UNHEALTHY';

function mapMembers(t: Topology, pick: (r: TopoRoute) => boolean, f: (m: PoolMember) => PoolMember): TopoRoute[] {
  return t.routes.map((r) => (pick(r) && r.pool ? { ...r, pool: r.pool.map(f) } : r));
}

/** An agent connected or disconnected: in every pool it belongs to. */
export function connectMember(t: Topology, agentId: number, connected: boolean): TopoRoute[] {
  return mapMembers(
    t,
    () => true,
    (m) => (m.agentId === agentId ? { ...m, connected, inRotation: inRotation({ connected, health: m.health }) } : m),
  );
}

/** ROUTE_HEALTH: the verdict of one agent of one route's pool, and whether it is in the rotation now. */
export function healthOfMember(
  t: Topology,
  d: { routeId: number; agentId: number; health: PoolMember['health']; inRotation: boolean; error: string | null },
) {
  return mapMembers(
    t,
    (r) => r.id === d.routeId,
    (m) => (m.agentId === d.agentId ? { ...m, health: d.health, inRotation: d.inRotation, healthError: d.error } : m),
  );
}

/**
 * REQUEST_IN_FLIGHT (+1) and REQUEST_COMPLETED (one request more for `agentId`; one in flight less
 * for `startedOn`, the agent the request started on when it was retried elsewhere, else `agentId`).
 */
export function countOnMember(t: Topology, routeId: number, agentId: number, delta: 1 | -1, startedOn = agentId): TopoRoute[] {
  return mapMembers(
    t,
    (r) => r.id === routeId,
    (m) => ({
      ...m,
      inFlight: m.agentId === (delta > 0 ? agentId : startedOn) ? Math.max(0, m.inFlight + delta) : m.inFlight,
      requests: m.requests + (delta < 0 && m.agentId === agentId ? 1 : 0),
    }),
  );
}

/**
 * A created or updated route: its pool from `route.agents`. Route events carry no `pool`; an agent
 * that stays in the pool keeps what the view knew of it, a new one starts from the agent's status.
 */
export function poolAfterUpdate(t: Topology, route: Route): PoolMember[] {
  if (route.pool) return route.pool;
  const before = new Map((t.routes.find((r) => r.id === route.id)?.pool ?? []).map((m) => [m.agentId, m]));
  const members = route.agents?.length ? route.agents : [{ agentId: route.agentId }];
  return members.map(({ agentId }) => {
    const agent = t.agents.find((a) => a.id === agentId);
    const old = before.get(agentId);
    const connected = old?.connected ?? agent?.status === 'CONNECTED';
    const health = !route.healthCheck ? 'NOT_CHECKED' : !old || old.health === 'NOT_CHECKED' ? 'UNKNOWN' : old.health;
    const kept = health === old?.health;
    return {
      agentId,
      name: agent?.name ?? old?.name ?? String(agentId),
      connected,
      health,
      healthCheckedAt: kept ? old.healthCheckedAt : null,
      healthError: kept ? old.healthError : null,
      inRotation: inRotation({ connected, health }),
      inFlight: old?.inFlight ?? 0,
      requests: old?.requests ?? 0,
    };
  });
}

/** The SERVES edges with those of `routeId` replaced by one from each agent of `pool` (none: the route is gone). */
export function servesEdges(edges: Edge[], routeId: number, pool: Array<{ agentId: number }>): Edge[] {
  const to = `route:${routeId}`;
  return [
    ...edges.filter((e) => !(e.kind === 'SERVES' && e.to === to)),
    ...pool.map((m) => ({ from: `agent:${m.agentId}`, to, kind: 'SERVES' as const })),
  ];
}

/** The agents of a route's pool, in order (the first one's `agentId` when the route predates pools). */
export function poolAgents(r: TopoRoute): number[] {
  return r.pool?.map((m) => m.agentId) ?? r.agents?.map((a) => a.agentId) ?? [r.agentId];
}

const NAME_WIDTH = 16;

export interface PoolLine {
  depth: number;
  text: string;
  status?: string;
}

function rotationText(m: PoolMember): string {
  if (m.inRotation) return 'in rotation';
  return m.connected ? 'out' : 'out, offline';
}

/**
 * The pool under its route's line: for several agents, a line with the policy,
 * how many agents take new requests and the basis of the shares; then one line
 * per agent, in pool order, with its health, rotation, share of the traffic and
 * requests in flight (within 80 columns with the box for names up to 16; an
 * agent's own target is in `routes get`). `recent`: the requests per agent of
 * the last minute (TrafficShare), if the view has seen any.
 */
export function poolLines(r: TopoRoute, recent: Map<number, number> = new Map()): PoolLine[] {
  const pool = r.pool ?? [];
  const { percent, basis } = shares(pool, recent);
  const up = pool.filter((m) => m.inRotation).length;
  const policy = `${r.policy ?? 'round-robin'}${r.affinity === 'client-ip' ? ' +client-ip' : ''}`;
  const lines: PoolLine[] = [];
  // One agent: its own line says it all; the summary is for pools.
  if (pool.length > 1)
    lines.push({
      depth: 2,
      text: `pool: ${policy}, ${up}/${pool.length} in rotation${basis ? `, share ${basis}` : ''}`,
      status: up ? (up === pool.length ? 'CONNECTED' : 'PENDING') : 'DISCONNECTED',
    });
  // Names are cut to 16 columns so that a pool's columns line up within 80.
  const width = Math.min(NAME_WIDTH, Math.max(0, ...pool.map((m) => m.name.length)));
  const cut = (name: string) => (name.length > width ? `${name.slice(0, width - 1)}…` : name.padEnd(width));
  for (const m of pool) {
    const share = `share ${String(percent.get(m.agentId) ?? 0).padStart(3)}%`;
    const error = !m.inRotation && m.healthError ? `  ${m.healthError}` : '';
    lines.push({
      depth: 2,
      text: `${cut(m.name)}  ${m.health.padEnd(11)}  ${rotationText(m).padEnd(12)}  ${share}  in flight ${m.inFlight}${error}`,
      status: m.inRotation ? (m.health === 'UNKNOWN' ? 'PENDING' : 'CONNECTED') : 'DISCONNECTED',
    });
  }
  return lines;
}
