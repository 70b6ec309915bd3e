import type { Kysely } from 'kysely';

/**
 * `alert_events_incident`: the router looks up an incident's opening for each resolution and
 * catch-up (routing/subjects.ts openingNotifiers, rules/catch-up.ts), and reminders look up their
 * incidents' events. Without an index each lookup scanned the outbox, which keeps every event.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('alert_events_incident').on('alert_events').columns(['incident_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('alert_events_incident').execute();
}
