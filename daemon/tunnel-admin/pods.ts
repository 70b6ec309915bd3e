import { VERSION } from '../../src/version.ts';
import type { DaemonContext } from '../context.ts';
import type { PodRow } from '../store/schema.ts';
import { toPod } from './mappers.ts';
import { publishTopology } from './topology-events.ts';

/** How often a running pod says it is alive, and when silence means it is gone (crashed). */
export const POD_HEARTBEAT_MS = 30_000;
export const POD_STALE_MS = 3 * POD_HEARTBEAT_MS;

/** What the registration uses of the daemon. */
export type PodDeps = Pick<DaemonContext, 'db' | 'log' | 'events' | 'pod'>;

/** This daemon's pod row, kept alive by a heartbeat until `unregister`. */
export interface RegisteredPod {
  row: PodRow;
  unregister(): Promise<void>;
}

/**
 * Registers this daemon as a pod (insert or revive the row of the same name),
 * marks agents left CONNECTED to it by a crash as DISCONNECTED, publishes
 * POD_UP and keeps `last_seen_at` fresh.
 */
export async function registerPod(ctx: PodDeps): Promise<RegisteredPod> {
  const name = ctx.pod.name;
  const now = Date.now();
  const row = await ctx.db.transaction().execute(async (trx) => {
    const existing = await trx.selectFrom('pods').select('id').where('name', '=', name).executeTakeFirst();
    const values = { started_at: now, version: VERSION, last_seen_at: now, stopped_at: null };
    const pod = existing
      ? await trx.updateTable('pods').set(values).where('id', '=', existing.id).returningAll().executeTakeFirstOrThrow()
      : await trx
          .insertInto('pods')
          .values({ name, ...values })
          .returningAll()
          .executeTakeFirstOrThrow();
    // A previous run of this pod that crashed left its sessions marked live.
    await trx
      .updateTable('agents')
      .set({ status: 'DISCONNECTED' })
      .where('pod_id', '=', pod.id)
      .where('status', '=', 'CONNECTED')
      .execute();
    return pod;
  });
  const timer = setInterval(() => {
    ctx.db
      .updateTable('pods')
      .set({ last_seen_at: Date.now() })
      .where('id', '=', row.id)
      .execute()
      .catch((err) => ctx.log.warn({ err }, 'pod heartbeat failed'));
  }, POD_HEARTBEAT_MS);
  timer.unref();
  ctx.pod.registered(Number(row.id));
  publishTopology(ctx, 'POD_UP', { pod: toPod(row) });
  return {
    row,
    /** On shutdown: the pod row says stopped, the stream says POD_DOWN. */
    async unregister() {
      clearInterval(timer);
      await ctx.db.updateTable('pods').set({ stopped_at: Date.now() }).where('id', '=', row.id).execute();
      publishTopology(ctx, 'POD_DOWN', { pod: toPod(row) });
    },
  };
}
