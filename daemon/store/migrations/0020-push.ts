import type { Kysely } from 'kysely';
import { ms, withId } from './util.ts';

/**
 * Push checks (docs/API.md#push-checks):
 * - `push_checks`: one row per PUSH resource: its ping uuid and slug (both unique), its schedule
 *   (a period or a cron expression in a zone, plus grace) and its deadline state. `late_at` is
 *   when it turns NOT_AVAILABLE unless a ping comes first; the pod that judges a deadline clears
 *   it with `WHERE late_at = <the one it judged>`, so a deadline is judged once whichever pods
 *   race for it, and a ping at any pod moves it.
 * - `ping_keys`: `/ping/{key}/{slug}`: the daemon's key (group_id NULL) and one per group.
 * - `check_history.ping` (the ping's own fields as JSON) and `ping_body` (its kept body): NULL
 *   for every other entry.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('push_checks')
    .addColumn('resource_id', 'integer', (c) => c.primaryKey().references('resources.id').onDelete('cascade'))
    .addColumn('uuid', 'varchar(36)', (c) => c.notNull().unique())
    .addColumn('slug', 'varchar(100)', (c) => c.notNull().unique())
    .addColumn('period_seconds', 'integer')
    .addColumn('cron', 'varchar(120)')
    .addColumn('timezone', 'varchar(64)')
    .addColumn('grace_seconds', 'integer', (c) => c.notNull())
    .addColumn('last_ping_at', ms)
    .addColumn('last_ping_kind', 'varchar(16)')
    .addColumn('started_at', ms)
    .addColumn('late_at', ms)
    .execute();
  await db.schema.createIndex('push_checks_late_at').on('push_checks').column('late_at').execute();
  await withId(db, db.schema.createTable('ping_keys'))
    .addColumn('key', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('group_id', 'integer', (c) => c.references('groups.id').onDelete('cascade').unique())
    .addColumn('allow_create', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', ms, (c) => c.notNull())
    .execute();
  await db.schema.alterTable('check_history').addColumn('ping', 'text').execute();
  await db.schema.alterTable('check_history').addColumn('ping_body', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('check_history').dropColumn('ping_body').execute();
  await db.schema.alterTable('check_history').dropColumn('ping').execute();
  await db.schema.dropTable('ping_keys').execute();
  await db.schema.dropTable('push_checks').execute();
}
