import { type Kysely, sql } from 'kysely';
import { ms } from './util.ts';

/**
 * `push_checks.created_at`: when a push check began to count, by the daemon's clock (`ctx.clock`,
 * which a test daemon moves forward). A schedule edit before the first ping recomputes the
 * deadline from it; `resources.created_at` is wall time and would put that deadline in the test
 * clock's past. NULL only for rows written before this migration (they fall back to the
 * resource's creation).
 *
 * `ping_keys_daemon`: at most one daemon key. `group_id` is unique for the groups' keys, but NULLs
 * never clash in a unique index, so two pods creating the daemon's key at once would both insert;
 * this partial index makes the second a unique violation (409) on SQLite and PostgreSQL alike.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('push_checks').addColumn('created_at', ms).execute();
  await sql`CREATE UNIQUE INDEX ping_keys_daemon ON ping_keys ((group_id IS NULL)) WHERE group_id IS NULL`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX ping_keys_daemon`.execute(db);
  await db.schema.alterTable('push_checks').dropColumn('created_at').execute();
}
