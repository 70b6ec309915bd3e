import type { Kysely } from 'kysely';

/**
 * An HTTP check's request and expected answer (docs/DECISIONS.md#http-request-fields):
 * `http_request` the plain fields as JSON, `http_secrets` the secret values sealed with the
 * install secret, `timeout_seconds` and `upside_down` (any type). All NULL on a resource that sets
 * none, so every resource from before keeps the seed's check.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('resources').addColumn('http_request', 'text').execute();
  await db.schema.alterTable('resources').addColumn('http_secrets', 'text').execute();
  await db.schema.alterTable('resources').addColumn('timeout_seconds', 'integer').execute();
  await db.schema.alterTable('resources').addColumn('upside_down', 'integer').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const column of ['upside_down', 'timeout_seconds', 'http_secrets', 'http_request'])
    await db.schema.alterTable('resources').dropColumn(column).execute();
}
