import { type Kysely, sql } from 'kysely';
import { notifyTableChanges } from '../dialect/postgres-schema.ts';
import { isPostgres } from './util.ts';

/**
 * The public edge, continued (after 0011-edge):
 * - `status_pages.https_redirect`: a status page's custom hostname gets a
 *   route's HTTPS treatment (plain-HTTP requests for the page get a 308);
 * - on PostgreSQL, `certificates` notifies its changes like the other cached
 *   tables (dialect/postgres-schema.ts), so that a certificate one pod
 *   ordered or uploaded is served by every pod's TLS edge within a second
 *   (a change of the certificate itself: updates of only its order's claim
 *   do not make every pod reload).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('status_pages')
    .addColumn('https_redirect', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  if (isPostgres(db)) await notifyTableChanges(db, [['certificates', 'INSERT OR UPDATE OF cert_pem OR DELETE OR TRUNCATE']]);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) await sql`DROP TRIGGER IF EXISTS monctl_certificates_changed ON certificates`.execute(db);
  await db.schema.alterTable('status_pages').dropColumn('https_redirect').execute();
}
