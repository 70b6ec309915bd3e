import { type RawBuilder, sql, type Transaction } from 'kysely';
import type { AlertColumns } from '../alerts/incidents/engine.ts';
import { shapedChunks } from '../store/batches.ts';
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
}

/** Rows per statement: 15 columns x 2 parameters x 64 rows stays far below every dialect's limit. */
const MAX_ROWS = 64;

/**
 * Updates the latest-check columns of many resources with one statement per
 * chunk (`SET col = CASE id WHEN … THEN … END`), instead of one UPDATE per
 * resource: statement preparation dominates the writer's cost otherwise.
 * Standard SQL only; numbers are CAST so that PostgreSQL types the branches.
 */
export async function updateLatest(trx: Transaction<Database>, updates: LatestUpdate[]): Promise<void> {
  for (const part of shapedChunks(updates, MAX_ROWS)) {
    const cases = <T>(pick: (u: LatestUpdate) => RawBuilder<unknown>): RawBuilder<T> =>
      sql<T>`CASE ${sql.ref('id')} ${sql.join(
        part.map((u) => sql`WHEN ${u.id} THEN ${pick(u)}`),
        sql` `,
      )} END`;
    const text = (pick: (u: LatestUpdate) => string | null) => cases<string>((u) => sql`${pick(u)}`);
    // CAST(NULL AS bigint) is NULL: the SQL text stays the same whatever the values (one prepared statement).
    const int = (pick: (u: LatestUpdate) => number | null) => cases<number>((u) => sql`CAST(${pick(u)} AS bigint)`);
    await trx
      .updateTable('resources')
      .set({
        current_status: text((u) => u.current_status),
        latest_check_status: text((u) => u.latest_check_status),
        latest_checked_at: int((u) => u.latest_checked_at),
        latest_message: text((u) => u.latest_message),
        latest_error_code: text((u) => u.latest_error_code),
        latest_duration_ms: int((u) => u.latest_duration_ms),
        latest_timing: text((u) => u.latest_timing),
        fail_streak: int((u) => u.fail_streak),
        ok_streak: int((u) => u.ok_streak),
        fail_since: int((u) => u.fail_since),
        fail_message: text((u) => u.fail_message),
        fail_error_code: text((u) => u.fail_error_code),
        open_incident_id: int((u) => u.open_incident_id),
        cert_expires_at: int((u) => u.cert_expires_at),
        cert_alerted_days: int((u) => u.cert_alerted_days),
      })
      .where(
        'id',
        'in',
        part.map((u) => u.id),
      )
      .execute();
  }
}
