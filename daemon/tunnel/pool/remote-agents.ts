import { TOPOLOGY_CHANNEL } from '../../../src/api/schemas/tunnel.ts';
import type { DaemonContext } from '../../context.ts';
import { CoalescedReload } from '../../util/coalesced.ts';

/** The cache is read again after this long even without an event (a pod that died without a word). */
const STALE_MS = 5_000;
/** A request that finds no agent in the rotation may reload the cache, at most this often. */
const MISS_RELOAD_MS = 250;

/**
 * Pods: which agents are connected to another live pod, and that pod's API URL (the pod relay,
 * tunnel-relay.ts, reaches them through it). One query for all agents, held in memory so that the
 * balancer chooses synchronously; reloaded when any pod's agent connects or disconnects (the
 * topology channel reaches every pod), every STALE_MS, and on a miss. Bounded by the agents table.
 */
export class RemoteAgents {
  readonly #ctx: DaemonContext;
  #byAgent = new Map<number, string>();
  #loadedAt = 0;
  readonly #reload = new CoalescedReload(() => this.#load());
  readonly #stop: () => void;

  constructor(ctx: DaemonContext) {
    this.#ctx = ctx;
    this.#stop = ctx.events.channel(TOPOLOGY_CHANNEL).listen((event) => {
      if (event.kind === 'AGENT_CONNECTED' || event.kind === 'AGENT_DISCONNECTED') this.invalidate();
    });
  }

  /** The API URL of the pod holding the agent's session, as last read (stale reads start a reload). */
  url(agentId: number): string | undefined {
    if (Date.now() - this.#loadedAt > STALE_MS) void this.#reload.run().catch(() => {});
    return this.#byAgent.get(agentId);
  }

  /** The cache is wrong now (an event, or a relay that failed). */
  invalidate(): void {
    void this.#reload.run().catch(() => {});
  }

  /** Reloads unless it did so just now; for a request that found no agent in the rotation. */
  async refresh(): Promise<boolean> {
    if (Date.now() - this.#loadedAt < MISS_RELOAD_MS) return false;
    await this.#reload.run().catch(() => {});
    return true;
  }

  /** Whether the cache has been read at least once. */
  get loaded(): boolean {
    return this.#loadedAt > 0;
  }

  async #load(): Promise<void> {
    const rows = await this.#ctx.db
      .selectFrom('agents')
      .innerJoin('pods', 'pods.id', 'agents.pod_id')
      .innerJoin('cluster_members', 'cluster_members.pod_name', 'pods.name')
      .select(['agents.id', 'cluster_members.api_url', 'cluster_members.heartbeat_at'])
      .where('agents.status', '=', 'CONNECTED')
      .where('pods.name', '!=', this.#ctx.pod.name)
      .where('cluster_members.api_url', 'is not', null)
      .execute();
    const byAgent = new Map<number, { url: string; at: number }>();
    for (const row of rows) {
      const id = Number(row.id);
      const at = Number(row.heartbeat_at);
      const seen = byAgent.get(id);
      // An agent listed under two pods (a stale row): the pod heard from last, as the relay's own lookup.
      if (!seen || at > seen.at) byAgent.set(id, { url: row.api_url!, at });
    }
    this.#byAgent = new Map([...byAgent].map(([id, v]) => [id, v.url]));
    this.#loadedAt = Date.now();
  }

  close(): void {
    this.#stop();
  }
}
