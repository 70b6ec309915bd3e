import type { Generated } from 'kysely';

/** The tables of several pods on one database (migration 0012-pods). */
export interface ClusterTables {
  cluster_members: ClusterMembersTable;
  shard_leases: ShardLeasesTable;
  event_channels: { name: string; seq: number };
  event_spill: { id: Generated<number>; body: string; created_at: number };
}

export interface ClusterMembersTable {
  /** Random per daemon process: a restarted pod is a new member. */
  instance: string;
  pod_name: string;
  api_url: string | null;
  edge_url: string | null;
  started_at: number;
  /** The database's clock, not the pod's. */
  heartbeat_at: number;
  shards: number;
  resources: number;
  /** Checks this process has run since it started. */
  checks_total: number;
}

export interface ShardLeasesTable {
  shard: number;
  /** The member (instance) running this shard's checks; null when released. */
  holder: string | null;
  /** The database's clock: past it, any member may claim the shard. */
  lease_until: number;
}
