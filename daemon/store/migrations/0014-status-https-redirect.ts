import type { Kysely } from 'kysely';

/**
 * A status page's custom hostname gets a route's HTTPS treatment (issue 17):
 * `status_pages.https_redirect` = 1 sends plain-HTTP requests for the page on
 * its custom hostname a 308 to the HTTPS edge.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('status_pages').addColumn('https_redirect', 'integer', (c) => c.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('status_pages').dropColumn('https_redirect').execute();
}
