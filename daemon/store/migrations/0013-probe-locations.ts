import type { Kysely } from 'kysely';
import { ms } from './util.ts';

/**
 * Checks from several locations (docs/API.md#check-locations):
 * - `resource_locations`: where a resource is checked, in order; `agent_id`
 *   NULL is the daemon itself. A resource without rows is checked by the
 *   daemon alone (every resource before this migration). An agent that is a
 *   location cannot be deleted (no cascade: the API answers 409 first).
 * - `resources.quorum`: `any`, `majority` (default) or `all`.
 * - `location_results`: the latest result of each location (0 = the daemon),
 *   for resources checked anywhere but the daemon alone.
 * - `check_history.location`: the location of each check (NULL: the daemon).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('resource_locations')
    .addColumn('resource_id', 'integer', (c) => c.notNull().references('resources.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('agent_id', 'integer', (c) => c.references('agents.id'))
    .addPrimaryKeyConstraint('resource_locations_pk', ['resource_id', 'position'])
    .execute();
  await db.schema.createIndex('resource_locations_agent').on('resource_locations').column('agent_id').execute();
  await db.schema
    .alterTable('resources')
    .addColumn('quorum', 'varchar(8)', (c) => c.notNull().defaultTo('majority'))
    .execute();
  await db.schema
    .createTable('location_results')
    .addColumn('resource_id', 'integer', (c) => c.notNull().references('resources.id').onDelete('cascade'))
    .addColumn('agent_id', 'integer', (c) => c.notNull())
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('message', 'text')
    .addColumn('error_code', 'varchar(64)')
    .addColumn('checked_at', ms, (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('location_results_pk', ['resource_id', 'agent_id'])
    .execute();
  await db.schema.alterTable('check_history').addColumn('location', 'varchar(64)').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('check_history').dropColumn('location').execute();
  await db.schema.dropTable('location_results').execute();
  await db.schema.alterTable('resources').dropColumn('quorum').execute();
  await db.schema.dropTable('resource_locations').execute();
}
