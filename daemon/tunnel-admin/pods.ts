import { hostname } from 'node:os';
import { VERSION } from '../../src/version.ts';
import type { DaemonContext } from '../context.ts';
import type { PodRow } from '../store/schema.ts';
import { toPod } from './mappers.ts';
import { publishTopology } from './topology-events.ts';

/** How often a running pod says it is alive, and when silence means it is gone (crashed). */
export const POD_HEARTBEAT_MS = 30_000;
export const POD_STALE_MS = 3 * POD_HEARTBEAT_MS;

interface PodState { row: PodRow; timer: NodeJS.Timeout }
const pods = new WeakMap<DaemonContext, PodState>();

const names = new WeakMap<DaemonContext, string>();

/**
 * The podName setting (`MONCTL_POD_NAME`), else `<hostname>:<API port>`: the
 * same daemon gets the same pod id after a restart. Fixed at the first call
 * (the pod's registration, before the listeners bind), so that every part of
 * the daemon (the pods row, cluster_members, relays) names it alike.
 */
export function podName(ctx: DaemonContext): string {
  let name = names.get(ctx);
  if (name === undefined) {
    const configured = ctx.config.podName?.trim();
    name = (configured || `${hostname()}:${ctx.config.listen.port}`).slice(0, 200);
    names.set(ctx, name);
  }
  return name;
}

/**
 * Registers this daemon as a pod (insert or revive the row of the same name),
 * marks agents left CONNECTED to it by a crash as DISCONNECTED, publishes
 * POD_UP and keeps `last_seen_at` fresh.
 */
export async function registerPod(ctx: DaemonContext): Promise<PodRow> {
  const name = podName(ctx);
  const now = Date.now();
  const row = await ctx.db.transaction().execute(async (trx) => {
    const existing = await trx.selectFrom('pods').select('id').where('name', '=', name).executeTakeFirst();
    const values = { started_at: now, version: VERSION, last_seen_at: now, stopped_at: null };
    const pod = existing
      ? await trx.updateTable('pods').set(values).where('id', '=', existing.id).returningAll().executeTakeFirstOrThrow()
      : await trx.insertInto('pods').values({ name, ...values }).returningAll().executeTakeFirstOrThrow();
    // A previous run of this pod that crashed left its sessions marked live.
    await trx.updateTable('agents').set({ status: 'DISCONNECTED' })
      .where('pod_id', '=', pod.id).where('status', '=', 'CONNECTED').execute();
    return pod;
  });
  const timer = setInterval(() => {
    ctx.db.updateTable('pods').set({ last_seen_at: Date.now() }).where('id', '=', row.id).execute()
      .catch((err) => ctx.log.warn({ err }, 'pod heartbeat failed'));
  }, POD_HEARTBEAT_MS);
  timer.unref();
  pods.set(ctx, { row, timer });
  publishTopology(ctx, 'POD_UP', { pod: toPod(row) });
  return row;
}

/** The id of this daemon's pod; registered before the listeners accept anything. */
export function currentPodId(ctx: DaemonContext): number {
  const state = pods.get(ctx);
  if (!state) throw new Error('pod not registered yet');
  return Number(state.row.id);
}

/** On shutdown: the pod row says stopped, the stream says POD_DOWN. */
export async function unregisterPod(ctx: DaemonContext): Promise<void> {
  const state = pods.get(ctx);
  if (!state) return;
  clearInterval(state.timer);
  pods.delete(ctx);
  await ctx.db.updateTable('pods').set({ stopped_at: Date.now() }).where('id', '=', state.row.id).execute();
  publishTopology(ctx, 'POD_DOWN', { pod: toPod(state.row) });
}
