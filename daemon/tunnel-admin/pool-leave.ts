import type { Route } from '../../src/api/schemas/tunnel.ts';
import { toRoute } from './mappers.ts';
import { type Db, loadPools, poolOf, writePool } from './route-pool.ts';

/**
 * Before an agent is deleted: the routes it serves alone are returned to go with it (`gone`); in
 * the others it leaves the pool, and a route it led gets the next agent as its `agent_id`
 * (`kept`, read back after the change). Deleting one agent never takes a pool's route down.
 */
export async function leavePools(trx: Db, agentId: number): Promise<{ gone: Array<{ id: number; name: string }>; kept: Route[] }> {
  const member = await trx.selectFrom('route_agents').select('route_id').where('agent_id', '=', agentId).execute();
  const ids = [...new Set([...member.map((m) => Number(m.route_id))])];
  const led = await trx.selectFrom('routes').select('id').where('agent_id', '=', agentId).execute();
  for (const r of led) if (!ids.includes(Number(r.id))) ids.push(Number(r.id));
  if (!ids.length) return { gone: [], kept: [] };
  const [rows, pools] = await Promise.all([
    trx.selectFrom('routes').selectAll().where('id', 'in', ids).orderBy('id').execute(),
    loadPools(trx, ids),
  ]);
  const gone: Array<{ id: number; name: string }> = [];
  const kept: Route[] = [];
  for (const row of rows) {
    const id = Number(row.id);
    const rest = poolOf(row, pools.get(id)).agents.filter((a) => a.agentId !== agentId);
    if (!rest.length) {
      gone.push({ id, name: row.name });
      continue;
    }
    await writePool(trx, id, rest);
    const updated = await trx
      .updateTable('routes')
      .set({ agent_id: rest[0].agentId, updated_at: Date.now() })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    kept.push(toRoute(updated, (await loadPools(trx, [id])).get(id)));
  }
  return { gone, kept };
}
