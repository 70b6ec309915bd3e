import type { Kysely } from 'kysely';
import { ms, withId } from './util.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('groups'))
    .addColumn('name', 'varchar(200)', (c) => c.notNull().unique())
    .addColumn('visibility', 'varchar(16)', (c) => c.notNull())
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('updated_at', ms, (c) => c.notNull())
    .execute();

  await withId(db, db.schema.createTable('resources'))
    .addColumn('name', 'varchar(200)', (c) => c.notNull())
    .addColumn('resource_type', 'varchar(16)', (c) => c.notNull())
    .addColumn('target', 'varchar(2048)', (c) => c.notNull())
    .addColumn('skip_tls', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('recursive', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('active', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('interval_seconds', 'integer', (c) => c.notNull().defaultTo(60))
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('updated_at', ms, (c) => c.notNull())
    .addColumn('next_run_at', ms)
    .addColumn('current_status', 'varchar(16)', (c) => c.notNull().defaultTo('unknown'))
    .addColumn('latest_check_status', 'varchar(16)')
    .addColumn('latest_checked_at', ms)
    .addColumn('latest_message', 'text')
    .addColumn('latest_error_code', 'varchar(32)')
    .addColumn('latest_duration_ms', 'integer')
    .execute();
  await db.schema.createIndex('resources_name').on('resources').column('name').execute();
  await db.schema.createIndex('resources_next_run').on('resources').columns(['active', 'next_run_at']).execute();

  await db.schema
    .createTable('resource_groups')
    .addColumn('resource_id', 'integer', (c) => c.notNull().references('resources.id').onDelete('cascade'))
    .addColumn('group_id', 'integer', (c) => c.notNull().references('groups.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('resource_groups_pk', ['resource_id', 'group_id'])
    .execute();
  await db.schema.createIndex('resource_groups_group').on('resource_groups').column('group_id').execute();

  await withId(db, db.schema.createTable('check_history'))
    .addColumn('resource_id', 'integer', (c) => c.notNull().references('resources.id').onDelete('cascade'))
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('message', 'text')
    .addColumn('error_code', 'varchar(32)')
    .addColumn('checked_at', ms, (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('check_history_resource').on('check_history').columns(['resource_id', 'id']).execute();
  await db.schema.createIndex('check_history_checked_at').on('check_history').column('checked_at').execute();

  await withId(db, db.schema.createTable('announcements'))
    .addColumn('kind', 'varchar(16)', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('created_by', 'varchar(64)', (c) => c.notNull())
    .addColumn('active', 'integer', (c) => c.notNull())
    .addColumn('active_until', ms)
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('updated_at', ms, (c) => c.notNull())
    .execute();

  await withId(db, db.schema.createTable('registry_credentials'))
    .addColumn('registry', 'varchar(255)', (c) => c.notNull().unique())
    .addColumn('username', 'varchar(255)', (c) => c.notNull())
    .addColumn('password_enc', 'text', (c) => c.notNull())
    .addColumn('created_at', ms, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('cors_origins')
    .addColumn('origin', 'varchar(255)', (c) => c.primaryKey())
    .addColumn('created_at', ms, (c) => c.notNull())
    .execute();
}
