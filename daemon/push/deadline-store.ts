import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';

/** What the judge keeps of a push check: its deadline and what its MISSED_PING message says. */
export interface DeadlineRow {
  id: number;
  lateAt: number;
  lastPingAt: number | null;
  startedAt: number | null;
  graceSeconds: number;
}

/** Ids per query: well under every dialect's bind-parameter limit. */
export const IDS_PER_QUERY = 500;

const num = (v: number | string | null): number | null => (v === null ? null : Number(v));

/**
 * The pending deadlines of active push checks: all of them (`ids` absent, at start), or those of
 * `ids` (at most IDS_PER_QUERY; a check that is gone, inactive or judged has no row).
 */
export async function readDeadlines(db: Kysely<Database>, ids?: number[]): Promise<DeadlineRow[]> {
  // CROSS JOIN: SQLite keeps the order written, push_checks outside. It scanned every resource
  // for the pending deadlines at start (test/foundation/query-plans.test.ts); PostgreSQL plans a
  // cross join with its join condition as the inner join it is.
  let query = db
    .selectFrom('push_checks as p')
    .crossJoin('resources as r')
    .whereRef('r.id', '=', 'p.resource_id')
    .select(['p.resource_id', 'p.late_at', 'p.last_ping_at', 'p.started_at', 'p.grace_seconds'])
    .where('r.resource_type', '=', 'PUSH')
    .where('r.active', '=', 1)
    .where('p.late_at', 'is not', null);
  if (ids) query = query.where('p.resource_id', 'in', ids);
  const rows = await query.execute();
  return rows.map((r) => ({
    id: r.resource_id,
    lateAt: Number(r.late_at),
    lastPingAt: num(r.last_ping_at),
    startedAt: num(r.started_at),
    graceSeconds: r.grace_seconds,
  }));
}

/**
 * Claims due deadlines: clears `late_at` where it is still the one judged (a ping here or at
 * another pod moved it otherwise, and another pod may have claimed it first). Rows are updated
 * in id order, so pods claiming overlapping batches on PostgreSQL wait for each other rather than
 * deadlock. Returns the ids claimed.
 */
export async function claimDeadlines(trx: Transaction<Database>, due: Array<{ id: number; lateAt: number }>): Promise<Set<number>> {
  const claimed = new Set<number>();
  for (const { id, lateAt } of [...due].sort((a, b) => a.id - b.id)) {
    const result = await trx
      .updateTable('push_checks')
      .set({ late_at: null })
      .where('resource_id', '=', id)
      .where('late_at', '=', lateAt)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) > 0) claimed.add(id);
  }
  return claimed;
}

/** Push checks judged late and not pinged since (the `monctl_push_late` gauge). */
export async function countLate(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('push_checks as p')
    .innerJoin('resources as r', 'r.id', 'p.resource_id')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('r.active', '=', 1)
    .where('p.late_at', 'is', null)
    .where('r.latest_error_code', '=', 'MISSED_PING')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
