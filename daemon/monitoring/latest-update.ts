import { type RawBuilder, sql, type Transaction } from 'kysely';
import { shapedChunks } from '../store/batches.ts';
import type { Database } from '../store/schema.ts';

/** The latest-check columns of one resource, as the result writer sets them. */
export interface LatestUpdate {
  id: number;
  current_status: string;
  latest_check_status: string;
  latest_checked_at: number;
  latest_message: string;
  latest_error_code: string | null;
  latest_duration_ms: number;
}

/** Rows per statement: 6 columns x 2 parameters x 64 rows stays far below every dialect's limit. */
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
      sql<T>`CASE ${sql.ref('id')} ${sql.join(part.map((u) => sql`WHEN ${u.id} THEN ${pick(u)}`), sql` `)} END`;
    const text = (pick: (u: LatestUpdate) => string | null) => cases<string>((u) => sql`${pick(u)}`);
    const int = (pick: (u: LatestUpdate) => number) => cases<number>((u) => sql`CAST(${pick(u)} AS bigint)`);
    await trx.updateTable('resources').set({
      current_status: text((u) => u.current_status),
      latest_check_status: text((u) => u.latest_check_status),
      latest_checked_at: int((u) => u.latest_checked_at),
      latest_message: text((u) => u.latest_message),
      latest_error_code: text((u) => u.latest_error_code),
      latest_duration_ms: int((u) => u.latest_duration_ms),
    }).where('id', 'in', part.map((u) => u.id)).execute();
  }
}
