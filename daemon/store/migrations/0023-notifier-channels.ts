import type { Kysely } from 'kysely';

/**
 * Notification channels and routing (docs/API.md#alerts):
 * - `notifiers.title_template`, `body_template`: Liquid templates of the message; NULL: the default.
 * - `notification_attempts.note`: what else an attempt has to say (a template that failed to render).
 * - `resources.severity`: `critical` (the default, and every existing resource), `warning` or `info`.
 * - `resource_dependencies`: resource `resource_id` depends on `depends_on_id`; alerts of a
 *   dependent are held back while a dependency has an open incident.
 * - `alert_rules.severities` (JSON array; NULL: all) and `severity_override` (what PAGERDUTY and
 *   OPSGENIE receive for the rule's alerts instead of the resource's severity).
 * - `notification_items.severity`: the rule's override for this item, frozen when routed.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('notifiers').addColumn('title_template', 'text').execute();
  await db.schema.alterTable('notifiers').addColumn('body_template', 'text').execute();
  await db.schema.alterTable('notification_attempts').addColumn('note', 'text').execute();
  await db.schema
    .alterTable('resources')
    .addColumn('severity', 'varchar(16)', (c) => c.notNull().defaultTo('critical'))
    .execute();
  await db.schema
    .createTable('resource_dependencies')
    .addColumn('resource_id', 'integer', (c) => c.notNull().references('resources.id').onDelete('cascade'))
    .addColumn('depends_on_id', 'integer', (c) => c.notNull().references('resources.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('resource_dependencies_pk', ['resource_id', 'depends_on_id'])
    .execute();
  await db.schema.createIndex('resource_dependencies_depends_on').on('resource_dependencies').column('depends_on_id').execute();
  await db.schema.alterTable('alert_rules').addColumn('severities', 'text').execute();
  await db.schema.alterTable('alert_rules').addColumn('severity_override', 'varchar(16)').execute();
  await db.schema.alterTable('notification_items').addColumn('severity', 'varchar(16)').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('notification_items').dropColumn('severity').execute();
  await db.schema.alterTable('alert_rules').dropColumn('severity_override').execute();
  await db.schema.alterTable('alert_rules').dropColumn('severities').execute();
  await db.schema.dropTable('resource_dependencies').execute();
  await db.schema.alterTable('resources').dropColumn('severity').execute();
  await db.schema.alterTable('notification_attempts').dropColumn('note').execute();
  await db.schema.alterTable('notifiers').dropColumn('body_template').execute();
  await db.schema.alterTable('notifiers').dropColumn('title_template').execute();
}
