import type { Kysely } from 'kysely';
import { yieldTurn } from '../util/yield-turn.ts';
import type { Database } from './schema.ts';

/**
 * The resources' ids as ranges `(from, to]` of `size` ids, up to the highest id, with a turn of
 * the event loop between ranges: a read of every resource (a million) in bounded statements.
 */
export async function* resourceIdRanges(db: Kysely<Database>, size: number): AsyncGenerator<[number, number]> {
  const { top } = await db
    .selectFrom('resources')
    .select((eb) => eb.fn.max('id').as('top'))
    .executeTakeFirstOrThrow();
  for (let from = 0; from < Number(top ?? 0); from += size) {
    if (from > 0) await yieldTurn();
    yield [from, from + size];
  }
}
