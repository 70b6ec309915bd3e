import type { Kysely } from 'kysely';
import { ms } from './util.ts';

/**
 * Probe engine: hourly and daily rollups of check history (so a year of data
 * stays small once raw rows age out), and an index for per-resource time
 * ranges (rollups, retention, history by time).
 */
export async function up(db: Kysely<any>): Promise<void> {
  for (const table of ['check_rollups_hourly', 'check_rollups_daily']) {
    await db.schema
      .createTable(table)
      .addColumn('resource_id', 'integer', (c) => c.notNull().references('resources.id').onDelete('cascade'))
      .addColumn('bucket_start', ms, (c) => c.notNull())
      .addColumn('checks', 'integer', (c) => c.notNull())
      .addColumn('available', 'integer', (c) => c.notNull())
      .addColumn('duration_sum_ms', ms, (c) => c.notNull())
      .addColumn('duration_p95_ms', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint(`${table}_pk`, ['resource_id', 'bucket_start'])
      .execute();
    await db.schema.createIndex(`${table}_bucket`).on(table).column('bucket_start').execute();
  }
  await db.schema.createIndex('check_history_resource_checked').on('check_history').columns(['resource_id', 'checked_at']).execute();
}
