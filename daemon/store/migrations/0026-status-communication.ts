import type { Kysely } from 'kysely';
import { isPostgres, ms, withId } from './util.ts';

/**
 * What status pages say to their readers (docs/API.md#posted-incidents, #subscriptions, #branding):
 * - `status_incidents`: incidents posted on a page: title, impact, state (the latest update's),
 *   and the automatic incident it was promoted from (`source_incident_id`, NULL: posted by hand).
 *   `status_incident_resources`: the resources it affects, each with its impact.
 *   `status_incident_updates`: its timeline; `message_html` is `message` (Markdown) rendered and
 *   sanitised like announcements. `automatic` marks entries copied from an automatic incident.
 * - `status_maintenance_notices`: a maintenance window shown on a page with its own text,
 *   before and during the window.
 * - `status_subscribers`: readers of a page, by email (double opt-in: `confirmed_at` NULL until
 *   the owner's click) or by webhook (`secret_enc`: the signing secret, sealed). `token_nonce`
 *   makes the confirm and unsubscribe links (HMAC, daemon/status/subscribers/tokens.ts): a new
 *   nonce voids the old links. `resource_ids`/`group_ids` (JSON): what the reader picked, empty: all.
 * - `subscriber_messages`: the outbox, written in the transaction that posts an update (or signs a
 *   reader up); `subscriber_deliveries`: one per (message, subscriber), claimed and retried as
 *   alert notifications are (docs/DECISIONS.md#alerts-outbox-routing-delivery).
 * - `status_page_assets`: a page's logo and favicon; `status_pages` gains its accent colour,
 *   header link, and the EMAIL notifier whose SMTP settings send subscriber mail.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const blob = isPostgres(db) ? 'bytea' : 'blob';
  await withId(db, db.schema.createTable('status_incidents'))
    .addColumn('page_id', 'integer', (c) => c.notNull().references('status_pages.id').onDelete('cascade'))
    .addColumn('title', 'varchar(200)', (c) => c.notNull())
    .addColumn('impact', 'varchar(16)', (c) => c.notNull())
    .addColumn('state', 'varchar(16)', (c) => c.notNull())
    .addColumn('source_incident_id', 'integer', (c) => c.references('incidents.id').onDelete('set null'))
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('updated_at', ms, (c) => c.notNull())
    .addColumn('resolved_at', ms)
    .execute();
  await db.schema.createIndex('status_incidents_page').on('status_incidents').columns(['page_id', 'created_at']).execute();
  await db.schema
    .createTable('status_incident_resources')
    .addColumn('incident_id', 'integer', (c) => c.notNull().references('status_incidents.id').onDelete('cascade'))
    .addColumn('resource_id', 'integer', (c) => c.notNull().references('resources.id').onDelete('cascade'))
    .addColumn('impact', 'varchar(16)', (c) => c.notNull())
    .addPrimaryKeyConstraint('status_incident_resources_pk', ['incident_id', 'resource_id'])
    .execute();
  await withId(db, db.schema.createTable('status_incident_updates'))
    .addColumn('incident_id', 'integer', (c) => c.notNull().references('status_incidents.id').onDelete('cascade'))
    .addColumn('state', 'varchar(16)', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('message_html', 'text', (c) => c.notNull())
    .addColumn('automatic', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', ms, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('status_incident_updates_incident')
    .on('status_incident_updates')
    .columns(['incident_id', 'created_at'])
    .execute();
  await withId(db, db.schema.createTable('status_maintenance_notices'))
    .addColumn('page_id', 'integer', (c) => c.notNull().references('status_pages.id').onDelete('cascade'))
    .addColumn('window_id', 'integer', (c) => c.notNull().references('maintenance_windows.id').onDelete('cascade'))
    .addColumn('title', 'varchar(200)', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('message_html', 'text', (c) => c.notNull())
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('updated_at', ms, (c) => c.notNull())
    .addUniqueConstraint('status_maintenance_notices_page_window', ['page_id', 'window_id'])
    .execute();
  await withId(db, db.schema.createTable('status_subscribers'))
    .addColumn('page_id', 'integer', (c) => c.notNull().references('status_pages.id').onDelete('cascade'))
    .addColumn('kind', 'varchar(16)', (c) => c.notNull())
    .addColumn('address', 'varchar(2048)', (c) => c.notNull())
    .addColumn('address_key', 'varchar(2048)', (c) => c.notNull())
    .addColumn('resource_ids', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('group_ids', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('token_nonce', 'varchar(64)', (c) => c.notNull())
    .addColumn('secret_enc', 'text')
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('confirmed_at', ms)
    .addColumn('confirm_sent_at', ms)
    .addColumn('created_ip', 'varchar(64)')
    .addUniqueConstraint('status_subscribers_address', ['page_id', 'kind', 'address_key'])
    .execute();
  await withId(db, db.schema.createTable('subscriber_messages'))
    .addColumn('page_id', 'integer', (c) => c.notNull().references('status_pages.id').onDelete('cascade'))
    .addColumn('kind', 'varchar(32)', (c) => c.notNull())
    .addColumn('subscriber_id', 'integer', (c) => c.references('status_subscribers.id').onDelete('cascade'))
    .addColumn('incident_id', 'integer', (c) => c.references('status_incidents.id').onDelete('cascade'))
    .addColumn('update_id', 'integer', (c) => c.references('status_incident_updates.id').onDelete('cascade'))
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('fanned_at', ms)
    .addColumn('fanned_by', 'varchar(64)')
    .execute();
  await db.schema.createIndex('subscriber_messages_unfanned').on('subscriber_messages').columns(['fanned_at', 'id']).execute();
  await withId(db, db.schema.createTable('subscriber_deliveries'))
    .addColumn('message_id', 'integer', (c) => c.notNull().references('subscriber_messages.id').onDelete('cascade'))
    .addColumn('subscriber_id', 'integer', (c) => c.notNull().references('status_subscribers.id').onDelete('cascade'))
    .addColumn('delivery_key', 'varchar(64)', (c) => c.notNull())
    .addColumn('state', 'varchar(16)', (c) => c.notNull())
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('next_attempt_at', ms, (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('claimed_by', 'varchar(64)')
    .addColumn('claimed_until', ms)
    .addColumn('sent_at', ms)
    .addColumn('last_error', 'text')
    .addUniqueConstraint('subscriber_deliveries_once', ['message_id', 'subscriber_id'])
    .execute();
  await db.schema.createIndex('subscriber_deliveries_due').on('subscriber_deliveries').columns(['state', 'next_attempt_at']).execute();
  await db.schema
    .createTable('status_page_assets')
    .addColumn('page_id', 'integer', (c) => c.notNull().references('status_pages.id').onDelete('cascade'))
    .addColumn('kind', 'varchar(16)', (c) => c.notNull())
    .addColumn('content_type', 'varchar(64)', (c) => c.notNull())
    .addColumn('bytes', blob, (c) => c.notNull())
    .addColumn('sha256', 'varchar(64)', (c) => c.notNull())
    .addColumn('updated_at', ms, (c) => c.notNull())
    .addPrimaryKeyConstraint('status_page_assets_pk', ['page_id', 'kind'])
    .execute();
  const pages = db.schema.alterTable('status_pages');
  await pages.addColumn('accent_color', 'varchar(16)').execute();
  await pages.addColumn('header_link_url', 'varchar(2048)').execute();
  await pages.addColumn('header_link_text', 'varchar(100)').execute();
  await pages.addColumn('email_notifier_id', 'integer', (c) => c.references('notifiers.id').onDelete('set null')).execute();
  await pages.addColumn('subscriptions', 'integer', (c) => c.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const column of ['subscriptions', 'email_notifier_id', 'header_link_text', 'header_link_url', 'accent_color']) {
    await db.schema.alterTable('status_pages').dropColumn(column).execute();
  }
  for (const table of [
    'status_page_assets',
    'subscriber_deliveries',
    'subscriber_messages',
    'status_subscribers',
    'status_maintenance_notices',
    'status_incident_updates',
    'status_incident_resources',
    'status_incidents',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
