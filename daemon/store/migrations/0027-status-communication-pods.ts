import { type Kysely, sql } from 'kysely';
import { notifyTableChanges, widenVarcharColumns } from '../dialect/postgres-schema.ts';
import { isPostgres } from './util.ts';

/** Posted incidents and notices, written by one pod, show on the pages, feeds and streams of every pod. */
const TABLES: ReadonlyArray<[string, string]> = [
  'status_incidents',
  'status_incident_updates',
  'status_incident_resources',
  'status_maintenance_notices',
].map((table) => [table, 'INSERT OR UPDATE OR DELETE OR TRUNCATE']);

/**
 * PostgreSQL only: migration 0026's tables follow migration 0012's rules.
 * Their varchar columns become text (the API bounds what users send; a pod's
 * name in `claimed_by` is not the API's to bound), and the posted-incident
 * tables NOTIFY `monctl_tables` on change (daemon/status/index.ts drops the
 * views, feeds and live baselines of every pod).
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return;
  await widenVarcharColumns(db);
  await notifyTableChanges(db, TABLES);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return;
  for (const [table] of TABLES) await sql`DROP TRIGGER IF EXISTS ${sql.raw(`monctl_${table}_changed`)} ON ${sql.table(table)}`.execute(db);
}
