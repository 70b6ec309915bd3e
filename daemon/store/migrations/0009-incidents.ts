import type { Kysely } from 'kysely';
import { ms } from './util.ts';

/**
 * Incidents, maintenance and certificates (docs/API.md#incidents-and-maintenance): the agent's open
 * incident, set by a conditional update so that two daemons on one database
 * open one incident per outage, and unique maintenance window names (`apply -f`
 * manages windows by name), and the first failing check of the current
 * streak, which becomes the incident's cause when the streak reaches the
 * threshold (possibly several write batches later).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('resources').addColumn('fail_since', ms).execute();
  await db.schema.alterTable('resources').addColumn('fail_message', 'text').execute();
  await db.schema.alterTable('resources').addColumn('fail_error_code', 'text').execute();
  await db.schema.alterTable('agents').addColumn('open_incident_id', ms).execute();
  await db.schema.createIndex('maintenance_windows_name').on('maintenance_windows').column('name').unique().execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('maintenance_windows_name').execute();
  await db.schema.alterTable('agents').dropColumn('open_incident_id').execute();
  for (const column of ['fail_error_code', 'fail_message', 'fail_since']) {
    await db.schema.alterTable('resources').dropColumn(column).execute();
  }
}
