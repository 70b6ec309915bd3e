import type { Kysely } from 'kysely';
import { ms, withId } from './util.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('pods'))
    .addColumn('name', 'varchar(200)', (c) => c.notNull().unique())
    .addColumn('started_at', ms, (c) => c.notNull())
    .addColumn('version', 'varchar(64)', (c) => c.notNull())
    .addColumn('last_seen_at', ms, (c) => c.notNull())
    .addColumn('stopped_at', ms)
    .execute();

  await withId(db, db.schema.createTable('agents'))
    .addColumn('name', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('token_hash', 'varchar(64)')
    .addColumn('token_created_at', ms)
    .addColumn('status', 'varchar(16)', (c) => c.notNull().defaultTo('PENDING'))
    .addColumn('connected_at', ms)
    .addColumn('last_seen_at', ms)
    .addColumn('pod_id', 'integer')
    .addColumn('remote_address', 'varchar(100)')
    .addColumn('version', 'varchar(64)')
    .addColumn('created_at', ms, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('agents_token_hash').on('agents').column('token_hash').execute();

  await withId(db, db.schema.createTable('routes'))
    .addColumn('name', 'varchar(200)', (c) => c.notNull().unique())
    .addColumn('type', 'varchar(8)', (c) => c.notNull())
    .addColumn('agent_id', 'integer', (c) => c.notNull().references('agents.id').onDelete('cascade'))
    .addColumn('target', 'varchar(2048)', (c) => c.notNull())
    .addColumn('hostname', 'varchar(255)')
    .addColumn('path_prefix', 'varchar(1024)')
    .addColumn('listen_port', 'integer')
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('updated_at', ms, (c) => c.notNull())
    .execute();

  await withId(db, db.schema.createTable('route_log'))
    .addColumn('route_id', 'integer', (c) => c.notNull().references('routes.id').onDelete('cascade'))
    .addColumn('at', ms, (c) => c.notNull())
    .addColumn('method', 'varchar(16)')
    .addColumn('path', 'text')
    .addColumn('status', 'integer')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('bytes_in', 'bigint', (c) => c.notNull())
    .addColumn('bytes_out', 'bigint', (c) => c.notNull())
    .addColumn('client_ip', 'varchar(64)')
    .addColumn('agent_id', 'integer')
    .addColumn('pod_id', 'integer')
    .addColumn('error', 'text')
    .execute();
  await db.schema.createIndex('route_log_route').on('route_log').columns(['route_id', 'id']).execute();
}
