import type { DaemonContext } from '../context.ts';
import { toAgent } from './mappers.ts';
import { publishTopology } from './topology-events.ts';

export { publishTopology } from './topology-events.ts';

export interface ConnectionInfo {
  podId: number;
  remoteAddress: string;
  version: string | null;
  /** True when this session replaced a live session of the same agent. */
  replaced: boolean;
}

/**
 * The data plane reports an agent session that is now live: the row says
 * CONNECTED (to which pod, from where, which agent version) and the topology
 * stream gets AGENT_CONNECTED. Unknown agents (deleted meanwhile) are ignored.
 */
export async function markConnected(ctx: DaemonContext, agentId: number, info: ConnectionInfo): Promise<void> {
  const now = Date.now();
  const row = await ctx.db
    .updateTable('agents')
    .set({
      status: 'CONNECTED',
      connected_at: now,
      last_seen_at: now,
      pod_id: info.podId,
      remote_address: info.remoteAddress.slice(0, 100),
      version: info.version?.slice(0, 64) ?? null,
    })
    .where('id', '=', agentId)
    .returningAll()
    .executeTakeFirst();
  if (row) publishTopology(ctx, 'AGENT_CONNECTED', { agent: toAgent(row), podId: info.podId, replaced: info.replaced });
}

/**
 * The current session of an agent ended. Call it only for the session that is
 * current (not for one that a newer session replaced), so that a reconnect
 * never reads as DISCONNECTED. Publishes AGENT_DISCONNECTED with the reason.
 */
export async function markDisconnected(ctx: DaemonContext, agentId: number, reason: string): Promise<void> {
  const row = await ctx.db
    .updateTable('agents')
    .set({ status: 'DISCONNECTED', last_seen_at: Date.now() })
    .where('id', '=', agentId)
    .where('status', '=', 'CONNECTED')
    .returningAll()
    .executeTakeFirst();
  if (row) publishTopology(ctx, 'AGENT_DISCONNECTED', { agent: toAgent(row), reason });
}

/** Records that a connected agent is still there (heartbeat); no event. */
export async function markSeen(ctx: DaemonContext, agentId: number): Promise<void> {
  await ctx.db.updateTable('agents').set({ last_seen_at: Date.now() }).where('id', '=', agentId).execute();
}
