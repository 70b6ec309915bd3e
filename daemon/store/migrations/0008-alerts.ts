import type { Kysely } from 'kysely';
import { ms, withId } from './util.ts';

/**
 * Alerting (docs/DECISIONS.md#alerts-outbox-routing-delivery): incidents (the debounced view of checks), the alert
 * outbox, maintenance windows, notifiers, alert rules and the grouped
 * notifications with their delivery attempts. Lists of ids are JSON text:
 * they are read whole, never joined on.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('resources')
    .addColumn('failure_threshold', 'integer', (c) => c.notNull().defaultTo(3))
    .execute();
  await db.schema
    .alterTable('resources')
    .addColumn('success_threshold', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
  // Consecutive NOT_AVAILABLE / AVAILABLE checks so far; UNKNOWN leaves both as they are.
  await db.schema
    .alterTable('resources')
    .addColumn('fail_streak', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('resources')
    .addColumn('ok_streak', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('resources').addColumn('open_incident_id', ms).execute();
  await db.schema.alterTable('resources').addColumn('cert_expires_at', ms).execute();
  // The smallest CERT_EXPIRING threshold (days) already announced for the current certificate.
  await db.schema.alterTable('resources').addColumn('cert_alerted_days', 'integer').execute();

  await withId(db, db.schema.createTable('incidents'))
    .addColumn('subject_type', 'text', (c) => c.notNull()) // resource | agent
    .addColumn('resource_id', ms)
    .addColumn('agent_id', ms)
    .addColumn('opened_at', ms, (c) => c.notNull())
    .addColumn('resolved_at', ms)
    .addColumn('cause_message', 'text')
    .addColumn('cause_error_code', 'text')
    .addColumn('checks', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('maintenance', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('incidents_resource').on('incidents').columns(['resource_id', 'id']).execute();
  await db.schema.createIndex('incidents_agent').on('incidents').columns(['agent_id', 'id']).execute();
  await db.schema.createIndex('incidents_open').on('incidents').columns(['resolved_at', 'id']).execute();

  // The outbox: written in the same transaction as the change it announces, routed later.
  await withId(db, db.schema.createTable('alert_events'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('subject_type', 'text', (c) => c.notNull())
    .addColumn('resource_id', ms)
    .addColumn('agent_id', ms)
    .addColumn('incident_id', ms)
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('suppressed', 'text') // why nothing is sent: maintenance | inhibited | …
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('routed_at', ms)
    .addColumn('routed_by', 'text')
    .execute();
  await db.schema.createIndex('alert_events_unrouted').on('alert_events').columns(['routed_at', 'id']).execute();

  await withId(db, db.schema.createTable('maintenance_windows'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull()) // ONE_OFF | WEEKLY
    .addColumn('starts_at', ms)
    .addColumn('ends_at', ms)
    .addColumn('days', 'text') // JSON ["MON", …]
    .addColumn('start_time', 'text') // HH:MM, local to time_zone
    .addColumn('duration_minutes', 'integer')
    .addColumn('time_zone', 'text')
    .addColumn('resource_ids', 'text', (c) => c.notNull())
    .addColumn('group_ids', 'text', (c) => c.notNull())
    .addColumn('agent_ids', 'text', (c) => c.notNull())
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('updated_at', ms, (c) => c.notNull())
    .execute();

  await withId(db, db.schema.createTable('notifiers'))
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('type', 'text', (c) => c.notNull()) // WEBHOOK | SLACK | NTFY | EMAIL
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('config', 'text', (c) => c.notNull()) // JSON, no secrets
    .addColumn('secrets_enc', 'text') // sealed JSON of the secrets, never returned
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('updated_at', ms, (c) => c.notNull())
    .execute();

  await withId(db, db.schema.createTable('alert_rules'))
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('events', 'text', (c) => c.notNull()) // JSON kinds
    .addColumn('notifier_ids', 'text', (c) => c.notNull())
    .addColumn('resource_ids', 'text', (c) => c.notNull()) // all three empty: every subject
    .addColumn('group_ids', 'text', (c) => c.notNull())
    .addColumn('agent_ids', 'text', (c) => c.notNull())
    .addColumn('group_wait_seconds', 'integer')
    .addColumn('repeat_interval_seconds', 'integer')
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('updated_at', ms, (c) => c.notNull())
    .execute();

  // One message to one notifier: the alert events of one group window.
  await withId(db, db.schema.createTable('notifications'))
    .addColumn('notifier_id', ms, (c) => c.notNull())
    .addColumn('message_id', 'text', (c) => c.notNull().unique()) // webhook-id, the same on every retry
    .addColumn('state', 'text', (c) => c.notNull()) // pending | sent | failed
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('send_after', ms, (c) => c.notNull()) // end of the group window
    .addColumn('next_attempt_at', ms, (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('claimed_by', 'text')
    .addColumn('claimed_until', ms)
    .addColumn('sent_at', ms)
    .addColumn('last_error', 'text')
    .execute();
  await db.schema.createIndex('notifications_due').on('notifications').columns(['state', 'next_attempt_at']).execute();
  await db.schema.createIndex('notifications_notifier').on('notifications').columns(['notifier_id', 'state', 'send_after']).execute();

  await db.schema
    .createTable('notification_items')
    .addColumn('notification_id', ms, (c) => c.notNull())
    .addColumn('event_id', ms, (c) => c.notNull())
    .addColumn('reminder', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('notification_items_pk', ['notification_id', 'event_id'])
    .execute();

  // Every attempt to deliver a notification (or a test message: notification_id null).
  await withId(db, db.schema.createTable('notification_attempts'))
    .addColumn('notifier_id', ms, (c) => c.notNull())
    .addColumn('notification_id', ms)
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('at', ms, (c) => c.notNull())
    .addColumn('ok', 'integer', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('latency_ms', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('notification_attempts_notifier').on('notification_attempts').columns(['notifier_id', 'id']).execute();

  // When a rule last reminded about an open incident (claimed by conditional update).
  await db.schema
    .createTable('alert_reminders')
    .addColumn('rule_id', ms, (c) => c.notNull())
    .addColumn('incident_id', ms, (c) => c.notNull())
    .addColumn('last_at', ms, (c) => c.notNull())
    .addPrimaryKeyConstraint('alert_reminders_pk', ['rule_id', 'incident_id'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    'alert_reminders',
    'notification_attempts',
    'notification_items',
    'notifications',
    'alert_rules',
    'notifiers',
    'maintenance_windows',
    'alert_events',
    'incidents',
  ]) {
    await db.schema.dropTable(table).execute();
  }
  for (const column of [
    'cert_alerted_days',
    'cert_expires_at',
    'open_incident_id',
    'ok_streak',
    'fail_streak',
    'success_threshold',
    'failure_threshold',
  ]) {
    await db.schema.alterTable('resources').dropColumn(column).execute();
  }
}
