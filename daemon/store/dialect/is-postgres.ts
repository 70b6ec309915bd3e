import { type Kysely, PostgresAdapter, type Transaction } from 'kysely';

/** Whether `db` speaks to PostgreSQL (for the few statements whose text differs from SQLite's). */
export function isPostgres(db: Kysely<any> | Transaction<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
