import { CompiledQuery, type Transaction } from 'kysely';
import type { AlertColumns } from '../alerts/incidents/engine.ts';
import { shapedChunks } from '../store/batches.ts';
import { isPostgres } from '../store/dialect/is-postgres.ts';
import type { Database } from '../store/schema.ts';

/** The latest-check columns of one resource, as the result writer sets them, with the incident engine's. */
export interface LatestUpdate extends AlertColumns {
  id: number;
  current_status: string;
  /** Null only while a resource has never been checked (an undecided round keeps them as they are). */
  latest_check_status: string | null;
  latest_checked_at: number | null;
  latest_message: string | null;
  latest_error_code: string | null;
  latest_duration_ms: number | null;
  /** The phases as JSON (check-timing.ts); null when none were timed. */
  latest_timing: string | null;
  /** The scheduler's next due time, written with the result (null: `next_run_at` stays as it is). */
  next_run_at?: number | null;
}

/** Every column the statement sets, `int`: cast to bigint (PostgreSQL types VALUES' parameters as text otherwise). */
const COLUMNS = [
  ['current_status', 'text'],
  ['latest_check_status', 'text'],
  ['latest_checked_at', 'int'],
  ['latest_message', 'text'],
  ['latest_error_code', 'text'],
  ['latest_duration_ms', 'int'],
  ['latest_timing', 'text'],
  ['fail_streak', 'int'],
  ['ok_streak', 'int'],
  ['fail_since', 'int'],
  ['fail_message', 'text'],
  ['fail_error_code', 'text'],
  ['open_incident_id', 'int'],
  ['cert_expires_at', 'int'],
  ['cert_alerted_days', 'int'],
  ['next_run_at', 'int'],
] as const satisfies ReadonlyArray<readonly [Exclude<keyof LatestUpdate, 'id'>, 'text' | 'int']>;

/** Rows per statement: 17 parameters a row; the 64-row text (about 20 KB) stays in the statement cache. */
export const LATEST_ROWS = 64;

/** The statement for `rows` rows, per dialect: built once, then only its parameters change. */
const texts = new Map<string, string>();

export function latestText(rows: number, postgres: boolean): string {
  const key = `${postgres ? 'pg' : 'sqlite'}:${rows}`;
  let text = texts.get(key);
  if (text) return text;
  let n = 0;
  const param = () => (postgres ? `$${++n}` : '?');
  const row = () =>
    `(CAST(${param()} AS bigint), ${COLUMNS.map(([, t]) => (t === 'int' ? `CAST(${param()} AS bigint)` : param())).join(', ')})`;
  const values = Array.from({ length: rows }, row).join(', ');
  const names = ['id', ...COLUMNS.map(([c]) => c)].join(', ');
  const sets = COLUMNS.map(([c]) => (c === 'next_run_at' ? `${c} = COALESCE(v.${c}, resources.${c})` : `${c} = v.${c}`)).join(', ');
  text = `WITH v(${names}) AS (VALUES ${values}) UPDATE resources SET ${sets} FROM v WHERE resources.id = v.id`;
  texts.set(key, text);
  return text;
}

/**
 * Updates the latest-check columns of many resources with one statement per chunk: `UPDATE … FROM`
 * a VALUES list joined on id (standard, SQLite 3.33+ and PostgreSQL). The SQL text is built once
 * per chunk size and sent as it is: kysely's builder, with one CASE per column, cost more CPU per
 * check than the check, and SQLite evaluated each CASE by scanning its branches for every row.
 */
export async function updateLatest(trx: Transaction<Database>, updates: LatestUpdate[]): Promise<void> {
  const postgres = isPostgres(trx);
  for (const part of shapedChunks(updates, LATEST_ROWS)) {
    const params: unknown[] = [];
    for (const u of part) {
      params.push(u.id);
      for (const [c] of COLUMNS) params.push(u[c] ?? null);
    }
    await trx.executeQuery(CompiledQuery.raw(latestText(part.length, postgres), params));
  }
}
