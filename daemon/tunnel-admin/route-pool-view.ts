import type { PoolHealth, PoolMember } from '../../src/api/schemas/route-pools.ts';
import { formatNullable } from '../../src/time.ts';
import type { DaemonContext } from '../context.ts';
import type { RouteAgentHealthRow, RouteAgentRow, RouteRow } from '../store/schema.ts';
import type { PoolStat } from '../tunnel-control.ts';
import { type PoolDraft, poolOf } from './route-pool.ts';

type Ctx = Pick<DaemonContext, 'db' | 'tunnel'>;
interface AgentState {
  name: string;
  status: string;
}

/**
 * Each agent of a route's pool now (docs/API.md#agent-pools): connected on any pod (the agents table),
 * its last health verdict (written by the pod holding its session), and this pod's traffic through it.
 */
export function membersOf(
  pool: PoolDraft,
  agents: Map<number, AgentState>,
  health: Map<number, RouteAgentHealthRow>,
  stats: PoolStat[],
): PoolMember[] {
  const traffic = new Map(stats.map((s) => [s.agentId, s]));
  return pool.agents.map(({ agentId }) => {
    const agent = agents.get(agentId);
    const verdict = health.get(agentId);
    const connected = agent?.status === 'CONNECTED';
    const state: PoolHealth = !pool.healthCheck ? 'NOT_CHECKED' : !verdict ? 'UNKNOWN' : verdict.healthy ? 'HEALTHY' : 'UNHEALTHY';
    return {
      agentId,
      name: agent?.name ?? String(agentId),
      connected,
      health: state,
      healthCheckedAt: pool.healthCheck ? formatNullable(verdict?.checked_at ?? null) : null,
      healthError: pool.healthCheck ? (verdict?.error ?? null) : null,
      inRotation: connected && state !== 'UNHEALTHY',
      inFlight: traffic.get(agentId)?.inFlight ?? 0,
      requests: traffic.get(agentId)?.requests ?? 0,
    };
  });
}

/** The health verdicts of some routes' pool agents (all when `routeIds` is left out), by route then agent. */
export async function loadHealth(ctx: Ctx, routeIds?: number[]): Promise<Map<number, Map<number, RouteAgentHealthRow>>> {
  let query = ctx.db.selectFrom('route_agent_health').selectAll();
  if (routeIds) query = query.where('route_id', 'in', routeIds);
  const byRoute = new Map<number, Map<number, RouteAgentHealthRow>>();
  for (const row of routeIds?.length === 0 ? [] : await query.execute()) {
    const map = byRoute.get(Number(row.route_id)) ?? new Map<number, RouteAgentHealthRow>();
    map.set(Number(row.agent_id), row);
    byRoute.set(Number(row.route_id), map);
  }
  return byRoute;
}

/** One route's pool members (the route detail). */
export async function poolMembers(ctx: Ctx, row: RouteRow, agents: RouteAgentRow[] | undefined): Promise<PoolMember[]> {
  const pool = poolOf(row, agents);
  const ids = pool.agents.map((a) => a.agentId);
  const [agentRows, health] = await Promise.all([
    ctx.db.selectFrom('agents').select(['id', 'name', 'status']).where('id', 'in', ids).execute(),
    loadHealth(ctx, [Number(row.id)]),
  ]);
  const byId = new Map(agentRows.map((a) => [Number(a.id), a]));
  return membersOf(pool, byId, health.get(Number(row.id)) ?? new Map(), ctx.tunnel.poolStats(Number(row.id)));
}
