import { CompiledQuery, type Kysely } from 'kysely';
import { shapedChunks } from '../store/batches.ts';
import { isPostgres } from '../store/dialect/is-postgres.ts';
import type { Database } from '../store/schema.ts';

/** Rows per statement: 2 parameters a row. */
export const NEXT_RUNS_ROWS = 256;

/** The statements by row count, per dialect: built once, then only their parameters change. */
const texts = new Map<string, string>();

/**
 * The statement for `rows` rows. PostgreSQL types VALUES' parameters as text unless cast; on
 * SQLite a CAST made the planner loop over every resource and probe the list instead at 256
 * rows (72 ms a statement at a million resources; 64 rows were planned right), so it has none
 * (test/foundation/query-plans.test.ts).
 */
export function nextRunsText(rows: number, postgres: boolean): string {
  const key = `${postgres ? 'pg' : 'sqlite'}:${rows}`;
  let text = texts.get(key);
  if (text) return text;
  let n = 0;
  const param = () => (postgres ? `CAST($${++n} AS bigint)` : '?');
  const values = Array.from({ length: rows }, () => `(${param()}, ${param()})`).join(', ');
  text = `WITH v(id, next_run_at) AS (VALUES ${values}) UPDATE resources SET next_run_at = v.next_run_at FROM v WHERE resources.id = v.id`;
  texts.set(key, text);
  return text;
}

/**
 * Writes `next_run_at` for many resources: one `UPDATE … FROM` a VALUES list per chunk, all in
 * one transaction, as updateLatest writes the latest columns (latest-update.ts). kysely's
 * `CASE id WHEN …` builder copied the whole CASE at each branch: 256 branches cost more CPU
 * than the statement.
 */
export async function persistNextRuns(db: Kysely<Database>, runs: Map<number, number>): Promise<void> {
  const items = [...runs];
  const postgres = isPostgres(db);
  await db.transaction().execute(async (trx) => {
    for (const part of shapedChunks(items, NEXT_RUNS_ROWS)) {
      const params: number[] = [];
      for (const [id, at] of part) params.push(id, Math.round(at));
      await trx.executeQuery(CompiledQuery.raw(nextRunsText(part.length, postgres), params));
    }
  });
}
