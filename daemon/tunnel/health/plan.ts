import type { DaemonContext } from '../../context.ts';
import { loadPools, poolOf } from '../../tunnel-admin/route-pool.ts';
import { type HealthSpec, healthSpecOf } from './spec.ts';

/** One agent of one health-checked route: what its checks need. */
export interface PlannedCheck {
  key: string;
  routeId: number;
  type: 'HTTP' | 'TCP';
  agentId: number;
  agentName: string;
  /** The agent's own target, else the route's. */
  target: string;
  spec: HealthSpec;
}

/**
 * The checks every pod would run: each agent of each enabled route that has a health check (each
 * pod then runs those of the agents whose sessions it holds). Read from the routes rather than the
 * edge's route table, so the checks follow their own fields and the edge stays as it is.
 */
export async function planChecks(db: DaemonContext['db']): Promise<PlannedCheck[]> {
  const rows = await db.selectFrom('routes').selectAll().where('enabled', '=', 1).where('health_check', 'is not', null).execute();
  if (!rows.length) return [];
  const pools = await loadPools(
    db,
    rows.map((r) => Number(r.id)),
  );
  const plan: PlannedCheck[] = [];
  const ids = new Set<number>();
  for (const row of rows) {
    const pool = poolOf(row, pools.get(Number(row.id)));
    if (!pool.healthCheck) continue;
    const spec = healthSpecOf(pool.healthCheck);
    for (const member of pool.agents) {
      ids.add(member.agentId);
      plan.push({
        key: `${row.id}/${member.agentId}`,
        routeId: Number(row.id),
        type: row.type === 'TCP' ? 'TCP' : 'HTTP',
        agentId: member.agentId,
        agentName: String(member.agentId),
        target: member.target ?? row.target,
        spec,
      });
    }
  }
  const names = await db
    .selectFrom('agents')
    .select(['id', 'name'])
    .where('id', 'in', [...ids])
    .execute();
  const byId = new Map(names.map((a) => [Number(a.id), a.name]));
  for (const p of plan) p.agentName = byId.get(p.agentId) ?? p.agentName;
  return plan;
}
