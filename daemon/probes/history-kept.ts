import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';

/** From when every check is kept (epoch ms of an hour start); before it, state changes only. */
export const COMPLETE_KEY = 'history.complete_from';
/** The history endpoint's header that says so. */
export const COMPLETE_FROM_HEADER = 'History-Complete-From';

export async function getSetting(db: Kysely<Database>, key: string): Promise<number | undefined> {
  const row = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
  return row ? Number(row.value) : undefined;
}

export async function setSetting(db: Kysely<Database>, key: string, value: number): Promise<void> {
  await db
    .insertInto('settings')
    .values({ key, value: String(value) })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value: String(value) }))
    .execute();
}

/**
 * From when every check is kept: where the size budget last thinned history to state changes,
 * or the first hour kept at all (retention deletes whole hours), whichever is later; now when
 * history is empty. Two primary-key reads.
 */
export async function completeFrom(db: Kysely<Database>, now = Date.now()): Promise<number> {
  const [thinned, first] = await Promise.all([
    getSetting(db, COMPLETE_KEY),
    db
      .selectFrom('history_hours')
      .select((eb) => eb.fn.min('hour_start').as('hour'))
      .executeTakeFirst(),
  ]);
  const kept = first?.hour == null ? now : Number(first.hour);
  return Math.max(thinned ?? kept, kept);
}
