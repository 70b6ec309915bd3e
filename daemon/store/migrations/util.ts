import type { CreateTableBuilder, Kysely } from 'kysely';
import { isPostgres } from '../dialect/is-postgres.ts';

/** An auto-incrementing integer id, spelled for whichever dialect runs the migration. */
export function withId<T extends string>(db: Kysely<any>, table: CreateTableBuilder<T, never>) {
  if (isPostgres(db)) {
    return table.addColumn('id', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity());
  }
  return table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
}

/** Epoch milliseconds. */
export const ms = 'bigint' as const;

/** Whether the migration runs on PostgreSQL (for the few steps that differ: see dialect/). */
export { isPostgres };
