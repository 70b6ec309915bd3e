import type { Kysely } from 'kysely';

/**
 * The phases of the latest check (docs/DECISIONS.md#check-timing): `resources.latest_timing` and
 * `location_results.timing`, each a small JSON object (`{"dnsMs":…,"totalMs":…}`), NULL before a
 * check that timed its phases. One text column rather than five numbers: the result writer sets
 * the latest columns of many resources in one CASE statement, whose bind parameters grow with
 * every column.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('resources').addColumn('latest_timing', 'text').execute();
  await db.schema.alterTable('location_results').addColumn('timing', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('location_results').dropColumn('timing').execute();
  await db.schema.alterTable('resources').dropColumn('latest_timing').execute();
}
