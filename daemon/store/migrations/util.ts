import { type CreateTableBuilder, type Kysely, PostgresAdapter } from 'kysely';

/** An auto-incrementing integer id, spelled for whichever dialect runs the migration. */
export function withId<T extends string>(db: Kysely<any>, table: CreateTableBuilder<T, never>) {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    return table.addColumn('id', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity());
  }
  return table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
}

/** Epoch milliseconds. */
export const ms = 'bigint' as const;

/** Whether the migration runs on PostgreSQL (for the few steps that differ: see dialect/). */
export function isPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
