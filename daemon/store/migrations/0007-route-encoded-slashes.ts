import type { Kysely } from 'kysely';

/**
 * `routes.allow_encoded_slashes`: whether the edge forwards paths holding `%2F`
 * or `%5C` for the route (0: refused with 400, the default for every route).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('routes')
    .addColumn('allow_encoded_slashes', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('routes').dropColumn('allow_encoded_slashes').execute();
}
