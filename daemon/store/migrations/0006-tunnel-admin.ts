import type { Kysely } from 'kysely';

/**
 * Uniqueness the route rules need, enforced by the database as well as by the
 * handlers (two concurrent creates cannot both win): one route per hostname
 * and path prefix, one route per TCP listen port. NULLs (the other type's
 * columns) never collide.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('routes_host_prefix').unique().on('routes').columns(['hostname', 'path_prefix']).execute();
  await db.schema.createIndex('routes_listen_port').unique().on('routes').column('listen_port').execute();
  await db.schema.createIndex('routes_agent').on('routes').column('agent_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('routes_agent').execute();
  await db.schema.dropIndex('routes_listen_port').execute();
  await db.schema.dropIndex('routes_host_prefix').execute();
}
