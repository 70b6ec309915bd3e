import type { Kysely } from 'kysely';
import { notifyTableChanges, widenVarcharColumns } from '../dialect/postgres-schema.ts';
import { isPostgres, ms, withId } from './util.ts';

/** Resources are spread over this many shards (`id % SHARDS`); pods lease shards, not resources. */
export const SHARDS = 64;

/**
 * Several daemons (pods) on one PostgreSQL database (README.md#several-daemons):
 * - cluster_members: one row per running daemon process (heartbeat in the
 *   database's clock), for the fair share of shards and the topology's load;
 * - shard_leases: which member runs the checks of which shard, until when;
 * - event_channels: the next sequence number of each event channel, so that
 *   every pod numbers an event alike (Last-Event-ID resumes on any pod);
 * - event_spill: events too large for a NOTIFY payload, fetched by id.
 * On PostgreSQL, varchar columns become text (dialect/postgres-schema.ts says why),
 * and the tables that pods cache notify their changes (triggers, same file).
 * On SQLite the tables stay empty but for the shard rows: one daemon runs everything.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    await widenVarcharColumns(db);
    await notifyTableChanges(db);
  }
  await db.schema
    .createTable('cluster_members')
    .addColumn('instance', 'text', (c) => c.primaryKey())
    .addColumn('pod_name', 'text', (c) => c.notNull())
    .addColumn('api_url', 'text')
    .addColumn('edge_url', 'text')
    .addColumn('started_at', ms, (c) => c.notNull())
    .addColumn('heartbeat_at', ms, (c) => c.notNull())
    .addColumn('shards', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('resources', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('checks_total', ms, (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createTable('shard_leases')
    .addColumn('shard', 'integer', (c) => c.primaryKey())
    .addColumn('holder', 'text')
    .addColumn('lease_until', ms, (c) => c.notNull().defaultTo(0))
    .execute();
  for (let shard = 0; shard < SHARDS; shard += 16) {
    await db
      .insertInto('shard_leases')
      .values(Array.from({ length: 16 }, (_, i) => ({ shard: shard + i, holder: null, lease_until: 0 })))
      .execute();
  }
  await db.schema
    .createTable('event_channels')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('seq', ms, (c) => c.notNull())
    .execute();
  await withId(db, db.schema.createTable('event_spill'))
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created_at', ms, (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['event_spill', 'event_channels', 'shard_leases', 'cluster_members']) await db.schema.dropTable(table).execute();
}
