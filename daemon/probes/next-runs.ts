import type { Kysely } from 'kysely';
import { shapedChunks } from '../store/batches.ts';
import type { Database } from '../store/schema.ts';

/** Rows per statement: 3 parameters a row. */
const MAX_ROWS = 256;

/**
 * Writes `next_run_at` for many resources: one `UPDATE … SET next_run_at =
 * CASE id WHEN … END WHERE id IN (…)` per chunk, all in one transaction.
 */
export async function persistNextRuns(db: Kysely<Database>, runs: Map<number, number>): Promise<void> {
  const items = [...runs];
  await db.transaction().execute(async (trx) => {
    for (const part of shapedChunks(items, MAX_ROWS)) {
      await trx
        .updateTable('resources')
        .set((eb) => {
          let kase = eb.case('id').when(part[0][0]).then(Math.round(part[0][1]));
          for (const [id, at] of part.slice(1)) kase = kase.when(id).then(Math.round(at));
          return { next_run_at: kase.else(eb.ref('next_run_at')).end() };
        })
        .where(
          'id',
          'in',
          part.map(([id]) => id),
        )
        .execute();
    }
  });
}
