import { type Kysely, sql } from 'kysely';
import { isPostgres } from './is-postgres.ts';

/**
 * The bytes check history takes, cheaply (never a scan). SQLite: the database's used pages
 * ((page_count − freelist_count) × page_size): history is nearly all of it at scale, and pages
 * freed by pruning count as free at once. PostgreSQL: `pg_total_relation_size` of the history
 * table (indexes and TOAST included) scaled by its share of live rows (`pg_stat_user_tables`:
 * deleted rows leave their space to new ones, the file does not shrink), plus the outcomes.
 */
export async function historyBytes(db: Kysely<any>): Promise<number> {
  if (isPostgres(db)) {
    const { rows } = await sql<{ n: string }>`
      SELECT (pg_total_relation_size('check_history') * greatest(s.n_live_tup, 1)::float8 / greatest(s.n_live_tup + s.n_dead_tup, 1)
        + pg_total_relation_size('check_outcomes'))::bigint AS n
      FROM pg_stat_user_tables s WHERE s.relid = 'check_history'::regclass`.execute(db);
    return Number(rows[0]?.n ?? 0);
  }
  const pragma = async (name: string) => {
    const { rows } = await sql<Record<string, number>>`SELECT * FROM ${sql.raw(`pragma_${name}`)}()`.execute(db);
    return Number(Object.values(rows[0])[0]);
  };
  return ((await pragma('page_count')) - (await pragma('freelist_count'))) * (await pragma('page_size'));
}

/**
 * After the compact table took over from `check_history_old` (migration 0029): its next id
 * continues after every id the old table ever gave, deleted ones included, so that an id seen in
 * an event never names another check.
 */
export async function restartHistoryIds(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    await sql`
      SELECT setval(pg_get_serial_sequence('check_history', 'id'), greatest(
        pg_sequence_last_value(pg_get_serial_sequence('check_history_old', 'id')::regclass),
        (SELECT max(id) FROM check_history), 1))`.execute(db);
    return;
  }
  const seq = sql`SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'check_history_old'), 0),
    coalesce((SELECT max(id) FROM check_history), 0))`;
  const { rows } = await sql<{ n: number }>`SELECT (${seq}) AS n`.execute(db);
  await sql`DELETE FROM sqlite_sequence WHERE name = 'check_history'`.execute(db);
  await sql`INSERT INTO sqlite_sequence (name, seq) VALUES ('check_history', ${rows[0].n})`.execute(db);
}
