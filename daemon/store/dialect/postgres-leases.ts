import { type Kysely, sql } from 'kysely';
import type { Database } from '../schema.ts';

/**
 * The SQL of shard leases between pods (daemon/cluster/shard-leases.ts), on
 * PostgreSQL only. Every time here is the database's clock, so that pods on
 * hosts whose clocks disagree still agree on when a lease has run out.
 */
const NOW = sql<number>`(extract(epoch from clock_timestamp()) * 1000)::bigint`;

export interface MemberState {
  instance: string;
  podName: string;
  apiUrl: string | null;
  edgeUrl: string | null;
  startedAt: number;
  shards: number;
  resources: number;
  checksTotal: number;
}

/** Says this member is alive (inserting its row the first time) and forgets members silent for `forgetMs`. */
export async function heartbeat(db: Kysely<Database>, m: MemberState, forgetMs: number): Promise<void> {
  const values = {
    pod_name: m.podName,
    api_url: m.apiUrl,
    edge_url: m.edgeUrl,
    shards: m.shards,
    resources: m.resources,
    checks_total: m.checksTotal,
  };
  await db
    .insertInto('cluster_members')
    .values({ instance: m.instance, started_at: m.startedAt, heartbeat_at: NOW, ...values })
    .onConflict((oc) => oc.column('instance').doUpdateSet({ heartbeat_at: NOW, ...values }))
    .execute();
  await db.deleteFrom('cluster_members').where('heartbeat_at', '<', sql<number>`${NOW} - ${forgetMs}`).execute();
}

/** The load of the members heard from within `ttlMs`, by pod name (the newest member of a pod name wins). */
export async function liveLoads(
  db: Kysely<Database>,
  ttlMs: number,
): Promise<Map<string, { shards: number; resources: number; checksTotal: number }>> {
  const rows = await db
    .selectFrom('cluster_members')
    .select(['pod_name', 'shards', 'resources', 'checks_total'])
    .where('heartbeat_at', '>', sql<number>`${NOW} - ${ttlMs}`)
    .orderBy('started_at')
    .execute();
  return new Map(
    rows.map((r) => [r.pod_name, { shards: Number(r.shards), resources: Number(r.resources), checksTotal: Number(r.checks_total) }]),
  );
}

/** Members heard from within `ttlMs`, oldest first (the order of the fair share). */
export async function liveMembers(db: Kysely<Database>, ttlMs: number): Promise<string[]> {
  const rows = await db
    .selectFrom('cluster_members')
    .select('instance')
    .where('heartbeat_at', '>', sql<number>`${NOW} - ${ttlMs}`)
    .orderBy('started_at')
    .orderBy('instance')
    .execute();
  return rows.map((r) => r.instance);
}

/** Extends every lease this member holds; returns the shards it still holds. */
export async function renewLeases(db: Kysely<Database>, instance: string, ttlMs: number): Promise<number[]> {
  const rows = await db
    .updateTable('shard_leases')
    .set({ lease_until: sql<number>`${NOW} + ${ttlMs}` })
    .where('holder', '=', instance)
    .returning('shard')
    .execute();
  return rows.map((r) => r.shard);
}

/**
 * Takes up to `count` shards that nobody holds or whose lease ran out. Rows
 * another member is claiming at this moment are skipped, not waited for.
 */
export async function claimShards(db: Kysely<Database>, instance: string, ttlMs: number, count: number): Promise<number[]> {
  if (count <= 0) return [];
  const rows = await db
    .updateTable('shard_leases')
    .set({ holder: instance, lease_until: sql<number>`${NOW} + ${ttlMs}` })
    .where('shard', 'in', (eb) =>
      eb
        .selectFrom('shard_leases')
        .select('shard')
        .where((w) => w.or([w('holder', 'is', null), w('lease_until', '<', NOW)]))
        .orderBy('shard')
        .limit(count)
        .forUpdate()
        .skipLocked(),
    )
    .returning('shard')
    .execute();
  return rows.map((r) => r.shard).sort((a, b) => a - b);
}

/** Gives shards back at once (the member has stopped running them). */
export async function releaseShards(db: Kysely<Database>, instance: string, shards: number[]): Promise<void> {
  if (shards.length === 0) return;
  await db
    .updateTable('shard_leases')
    .set({ holder: null, lease_until: 0 })
    .where('holder', '=', instance)
    .where('shard', 'in', shards)
    .execute();
}

/** A member stopping: its leases go back and its row goes. */
export async function leaveCluster(db: Kysely<Database>, instance: string): Promise<void> {
  await db.updateTable('shard_leases').set({ holder: null, lease_until: 0 }).where('holder', '=', instance).execute();
  await db.deleteFrom('cluster_members').where('instance', '=', instance).execute();
}
