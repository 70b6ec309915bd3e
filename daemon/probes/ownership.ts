/**
 * Which pod runs which resource's scheduled checks: the one decision the
 * scheduler leaves to others. One daemon (SQLite) runs everything; pods on
 * PostgreSQL each run the resources of the shards they lease
 * (daemon/cluster/shard-leases.ts): shard = id % SHARDS.
 */
export interface ResourceOwnership {
  /** Whether this pod schedules the resource now. */
  owns(resourceId: number): boolean;
}

export const ownsEverything: ResourceOwnership = { owns: () => true };

/**
 * When a resource taken over from another pod is due: at its recorded next
 * run when that is still ahead (a pod that handed its shards over wrote it
 * on the way out); else (its pod died) a full interval after its last
 * recorded check, or now if that is past. Never sooner than an interval
 * after the last check: a beat the previous pod ran is not run again.
 */
export function takeoverDue(nextRunAt: number | null, lastCheckedAt: number | null, intervalMs: number, now: number): number {
  if (nextRunAt !== null && nextRunAt >= now) return nextRunAt;
  return lastCheckedAt === null ? now : Math.max(now, lastCheckedAt + intervalMs);
}
