import type { DaemonContext } from '../../context.ts';

type Db = DaemonContext['db'];

/** The most of a check's message kept as a verdict's error (a target's status line or a condition's message fits). */
export const MAX_ERROR_LENGTH = 1024;

/** Records a verdict of the pod holding the agent's session (`route_agent_health`), replacing the last. */
export async function writeVerdict(
  db: Db,
  routeId: number,
  agentId: number,
  healthy: boolean,
  checkedAt: number,
  error: string | null,
): Promise<void> {
  const values = { healthy: healthy ? 1 : 0, checked_at: checkedAt, error: error?.slice(0, MAX_ERROR_LENGTH) ?? null };
  await db
    .insertInto('route_agent_health')
    .values({ route_id: routeId, agent_id: agentId, ...values })
    .onConflict((oc) => oc.columns(['route_id', 'agent_id']).doUpdateSet(values))
    .execute();
}

/** Moves an unchanged verdict's checked_at forward. */
export async function touchVerdict(db: Db, routeId: number, agentId: number, checkedAt: number): Promise<void> {
  await db
    .updateTable('route_agent_health')
    .set({ checked_at: checkedAt })
    .where('route_id', '=', routeId)
    .where('agent_id', '=', agentId)
    .execute();
}

/** Forgets a verdict (the agent left this pod, the route or its health check). */
export async function dropVerdict(db: Db, routeId: number, agentId: number): Promise<void> {
  await db.deleteFrom('route_agent_health').where('route_id', '=', routeId).where('agent_id', '=', agentId).execute();
}

/** Every stored verdict. */
export async function loadVerdicts(db: Db): Promise<{ routeId: number; agentId: number; healthy: boolean }[]> {
  const rows = await db.selectFrom('route_agent_health').select(['route_id', 'agent_id', 'healthy']).execute();
  return rows.map((r) => ({ routeId: Number(r.route_id), agentId: Number(r.agent_id), healthy: Boolean(r.healthy) }));
}
