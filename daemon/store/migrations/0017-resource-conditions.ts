import type { Kysely } from 'kysely';

/**
 * A resource's conditions (docs/DECISIONS.md#probe-conditions): `resources.conditions`, their
 * texts as a JSON array, NULL when none, so every resource from before stays as it was.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('resources').addColumn('conditions', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('resources').dropColumn('conditions').execute();
}
