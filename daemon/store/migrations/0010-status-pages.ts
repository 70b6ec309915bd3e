import type { Kysely } from 'kysely';
import { ms, withId } from './util.ts';

/**
 * Status pages (docs/API.md#status-pages): public pages over groups of resources. `group_ids`
 * is JSON text (read whole, in the page's order). A custom hostname serves the
 * page on the edge listener at `/`, so it is unique.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('status_pages'))
    .addColumn('slug', 'text', (c) => c.notNull().unique())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('group_ids', 'text', (c) => c.notNull())
    .addColumn('show_announcements', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('show_incidents', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('custom_hostname', 'text', (c) => c.unique())
    .addColumn('footer', 'text')
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('updated_at', ms, (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('status_pages').execute();
}
