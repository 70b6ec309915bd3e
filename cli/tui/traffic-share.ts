/** How far back the live view counts requests for each agent's share of a route's traffic. */
export const SHARE_WINDOW_MS = 60_000;
const BUCKET_MS = 1000;
/** Requests in flight remembered for the agent they started on; beyond this, the oldest are forgotten. */
export const MAX_OPEN = 10_000;

/**
 * Requests completed per route and agent over the last minute, from the
 * REQUEST_COMPLETED events of the topology stream, in one-second buckets:
 * at most 60 buckets per route whatever the request rate, and a route with no
 * traffic in the window holds none, so the memory stays bounded under load.
 */
export class TrafficShare {
  readonly #routes = new Map<number, Map<number, Map<number, number>>>();
  readonly #open = new Map<string, number>();

  /**
   * REQUEST_IN_FLIGHT: the agent a request started on. A request retried on another agent completes
   * there (REQUEST_COMPLETED names that one), so the view takes it out of the first one's count.
   */
  started(requestId: string, agentId: number): void {
    this.#open.set(requestId, agentId);
    if (this.#open.size > MAX_OPEN) this.#open.delete(this.#open.keys().next().value!);
  }

  /** REQUEST_COMPLETED: the agent the request started on, if the view saw it start. */
  finished(requestId: string): number | undefined {
    const agentId = this.#open.get(requestId);
    this.#open.delete(requestId);
    return agentId;
  }

  /** Counts one completed request of `routeId` through `agentId` at `now` (ms). */
  record(routeId: number, agentId: number, now: number): void {
    const bucket = Math.floor(now / BUCKET_MS);
    const buckets = this.#routes.get(routeId) ?? new Map<number, Map<number, number>>();
    this.#routes.set(routeId, buckets);
    const counts = buckets.get(bucket) ?? new Map<number, number>();
    buckets.set(bucket, counts);
    counts.set(agentId, (counts.get(agentId) ?? 0) + 1);
    this.#prune(routeId, now);
  }

  /** Requests per agent of `routeId` within the window ending at `now`; empty when there were none. */
  recent(routeId: number, now: number): Map<number, number> {
    this.#prune(routeId, now);
    const out = new Map<number, number>();
    for (const counts of this.#routes.get(routeId)?.values() ?? [])
      for (const [agentId, n] of counts) out.set(agentId, (out.get(agentId) ?? 0) + n);
    return out;
  }

  /** Forgets a deleted route. */
  forget(routeId: number): void {
    this.#routes.delete(routeId);
  }

  #prune(routeId: number, now: number): void {
    const buckets = this.#routes.get(routeId);
    if (!buckets) return;
    const oldest = Math.floor((now - SHARE_WINDOW_MS) / BUCKET_MS);
    for (const bucket of buckets.keys()) if (bucket <= oldest) buckets.delete(bucket);
    if (!buckets.size) this.#routes.delete(routeId);
  }
}

/**
 * Each agent's share of a route's requests, in percent: of the last minute when
 * it saw any, else of the pool's `requests` counters (`since start`: the
 * daemon's since it started, which seed the view before the stream has shown
 * traffic).
 */
export function shares(
  pool: Array<{ agentId: number; requests: number }>,
  recent: Map<number, number>,
): { percent: Map<number, number>; basis: 'of the last 60 s' | 'since start' | null } {
  const fromWindow = [...recent.values()].some((n) => n > 0);
  const count = (agentId: number, requests: number) => (fromWindow ? (recent.get(agentId) ?? 0) : requests);
  const total = pool.reduce((sum, m) => sum + count(m.agentId, m.requests), 0);
  const percent = new Map<number, number>();
  if (!total) return { percent, basis: null };
  for (const m of pool) percent.set(m.agentId, Math.round((100 * count(m.agentId, m.requests)) / total));
  return { percent, basis: fromWindow ? 'of the last 60 s' : 'since start' };
}
