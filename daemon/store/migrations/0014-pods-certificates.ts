import { type Kysely, sql } from 'kysely';
import { notifyTableChanges } from '../dialect/postgres-schema.ts';
import { isPostgres } from './util.ts';

/**
 * Pods serve certificates another pod ordered or uploaded (issue 18): on
 * PostgreSQL, a change of a certificate itself (not of its order's claim)
 * notifies `monctl_tables`, and every pod reloads its SNI store at once
 * instead of within its minute. Nothing on SQLite.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) await notifyTableChanges(db, [['certificates', 'INSERT OR UPDATE OF cert_pem OR DELETE OR TRUNCATE']]);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) await sql`DROP TRIGGER IF EXISTS monctl_certificates_changed ON certificates`.execute(db);
}
