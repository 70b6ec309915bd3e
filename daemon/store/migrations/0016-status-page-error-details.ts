import type { Kysely } from 'kysely';

/**
 * Status pages safe to publish: `status_pages.show_error_details`
 * (0 by default, also for existing pages) lets anonymous visitors see the
 * probes' own error messages; otherwise they see a generic cause.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('status_pages')
    .addColumn('show_error_details', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('status_pages').dropColumn('show_error_details').execute();
}
