import { type Kysely, sql } from 'kysely';
import { ms } from './util.ts';

/**
 * Agent pools, target health and header rules of routes (docs/API.md#agent-pools):
 * - `route_agents`: the agents of a route's pool, by `position` (0 first); `target` overrides the
 *   route's for that agent. `routes.agent_id` stays the first agent's (the seed's field), so
 *   existing routes are pools of one.
 * - `routes.policy`, `affinity`; `health_check` (JSON, NULL: none); `request_headers`,
 *   `response_headers` (JSON `{set, remove}`, NULL: none); `host_header`, `preserve_host`, `strip_prefix`.
 * - `route_agent_health`: the last health verdict of each pool agent, written by the pod that
 *   holds the agent's session, so every pod steers by it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('route_agents')
    .addColumn('route_id', 'integer', (c) => c.notNull().references('routes.id').onDelete('cascade'))
    .addColumn('agent_id', 'integer', (c) => c.notNull().references('agents.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('target', 'text')
    .addPrimaryKeyConstraint('route_agents_pk', ['route_id', 'agent_id'])
    .execute();
  await db.schema.createIndex('route_agents_agent').on('route_agents').column('agent_id').execute();
  await sql`INSERT INTO route_agents (route_id, agent_id, position) SELECT id, agent_id, 0 FROM routes`.execute(db);
  const routes = db.schema.alterTable('routes');
  await routes.addColumn('policy', 'varchar(32)', (c) => c.notNull().defaultTo('round-robin')).execute();
  await routes.addColumn('affinity', 'varchar(16)', (c) => c.notNull().defaultTo('none')).execute();
  await routes.addColumn('health_check', 'text').execute();
  await routes.addColumn('request_headers', 'text').execute();
  await routes.addColumn('response_headers', 'text').execute();
  await routes.addColumn('host_header', 'varchar(253)').execute();
  await routes.addColumn('preserve_host', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await routes.addColumn('strip_prefix', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema
    .createTable('route_agent_health')
    .addColumn('route_id', 'integer', (c) => c.notNull().references('routes.id').onDelete('cascade'))
    .addColumn('agent_id', 'integer', (c) => c.notNull().references('agents.id').onDelete('cascade'))
    .addColumn('healthy', 'integer', (c) => c.notNull())
    .addColumn('checked_at', ms, (c) => c.notNull())
    .addColumn('error', 'text')
    .addPrimaryKeyConstraint('route_agent_health_pk', ['route_id', 'agent_id'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('route_agent_health').execute();
  for (const column of [
    'strip_prefix',
    'preserve_host',
    'host_header',
    'response_headers',
    'request_headers',
    'health_check',
    'affinity',
    'policy',
  ]) {
    await db.schema.alterTable('routes').dropColumn(column).execute();
  }
  await db.schema.dropTable('route_agents').execute();
}
