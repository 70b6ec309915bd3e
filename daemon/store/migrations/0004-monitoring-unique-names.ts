import type { Kysely } from 'kysely';

/**
 * Resource names are unique (the CLI's `apply` matches by name): the API
 * checks inside its transaction, and this index makes the rule hold across
 * pods sharing a PostgreSQL database too.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('resources_name').execute();
  await db.schema.createIndex('resources_name_unique').on('resources').column('name').unique().execute();
}
