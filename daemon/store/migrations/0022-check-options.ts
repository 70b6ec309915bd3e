import type { Kysely } from 'kysely';

/**
 * `resources.check_options`: the protocol checks' own options (docs/API.md#check-types) as JSON,
 * the object of the resource's type with every field filled in (src/probes/types.ts
 * CheckOptionsByType). NULL for HTTP, DOCKER, PUSH, SSH and a plain TCP connect: a seed resource
 * reads and checks exactly as before.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('resources').addColumn('check_options', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('resources').dropColumn('check_options').execute();
}
