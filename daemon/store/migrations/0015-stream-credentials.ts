import { type Kysely, sql } from 'kysely';
import { notifyTableChanges } from '../dialect/postgres-schema.ts';
import { isPostgres } from './util.ts';

/**
 * Open streams follow their credentials on every pod (docs/API.md#streams-and-credentials): on
 * PostgreSQL, writes that can take away what a key or session grants notify
 * like the cached tables do (dialect/postgres-schema.ts), whoever wrote them,
 * and every pod checks its open streams (daemon/auth/stream-guard.ts).
 * Creations, a session's sliding expiry and a key's lastUsedAt take nothing
 * away, so they do not notify.
 */
const TABLES: ReadonlyArray<[table: string, events: string]> = [
  ['api_keys', 'UPDATE OF role, expires_at, route_ids, created_by_user_id OR DELETE OR TRUNCATE'],
  ['users', 'UPDATE OF role OR DELETE OR TRUNCATE'],
  ['sessions', 'DELETE OR TRUNCATE'],
];

export async function up(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) await notifyTableChanges(db, TABLES);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return;
  for (const [table] of TABLES) await sql`DROP TRIGGER IF EXISTS ${sql.raw(`monctl_${table}_changed`)} ON ${sql.table(table)}`.execute(db);
}
