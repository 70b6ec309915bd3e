import type { Kysely } from 'kysely';
import { historyBytes } from '../store/dialect/history-size.ts';
import type { Database } from '../store/schema.ts';
import { COMPLETE_KEY, getSetting, setSetting } from './history-kept.ts';
import { endId, type HourIds, idFrom, loadHours } from './history-ranges.ts';
import { yieldTurn } from '../util/yield-turn.ts';
import { HOUR } from './history-rows.ts';

/**
 * History ids per DELETE: adapted so that each statement takes about TARGET_MS (a row's index
 * entry sits beside its resource's other checks, so a DELETE of N ids dirties up to N index
 * pages), between MIN_CHUNK and MAX_CHUNK; no check or request waits long behind one.
 */
const TARGET_MS = 10;
const MIN_CHUNK = 100;
const MAX_CHUNK = 5_000;
let chunk = 1_000;

/** Observes each pruning statement's duration (the bench's pauses). */
export type PauseObserver = (ms: number) => void;

async function deleteRange(db: Kysely<Database>, lo: number, hi: number, changesToo: boolean, observe?: PauseObserver) {
  let deleted = 0;
  for (let at = lo; at < hi; ) {
    const to = Math.min(at + chunk, hi);
    const started = performance.now();
    let query = db.deleteFrom('check_history').where('id', '>=', at).where('id', '<', to);
    if (!changesToo) query = query.where('changed', '=', 0);
    deleted += Number((await query.executeTakeFirst()).numDeletedRows);
    const took = performance.now() - started;
    observe?.(took);
    at = to;
    chunk = Math.round(
      Math.min(MAX_CHUNK, Math.max(MIN_CHUNK, took > TARGET_MS ? chunk / 2 : took < TARGET_MS / 2 ? chunk * 1.25 : chunk)),
    );
    await yieldTurn();
  }
  return deleted;
}

/**
 * Retention: every check of the hours before `cutoff` (an hour start), by id range in small
 * statements, then those hours' first ids. Returns the checks deleted.
 */
export async function deleteBefore(db: Kysely<Database>, hours: HourIds[], cutoff: number, end: number, observe?: PauseObserver) {
  const boundary = idFrom(hours, cutoff, end);
  const first = await db
    .selectFrom('check_history')
    .select((eb) => eb.fn.min('id').as('id'))
    .executeTakeFirst();
  const deleted = first?.id == null ? 0 : await deleteRange(db, Number(first.id), boundary, true, observe);
  await db.deleteFrom('history_hours').where('hour_start', '<', cutoff).execute();
  return deleted;
}

/**
 * The size budget: while history takes more than `maxBytes`, thins the oldest rolled-up hours
 * (before `until`) to their state changes, hour by hour, and moves COMPLETE_KEY past each.
 * Returns the checks deleted.
 */
export async function pruneToBudget(db: Kysely<Database>, maxBytes: number, until: number, observe?: PauseObserver): Promise<number> {
  let size = await historyBytes(db);
  if (size <= maxBytes) return 0;
  const hours = await loadHours(db);
  const end = await endId(db);
  const from = (await getSetting(db, COMPLETE_KEY)) ?? Number.NEGATIVE_INFINITY;
  let deleted = 0;
  for (let i = 0; i < hours.length && size > maxBytes; i++) {
    const { hour, first } = hours[i];
    if (hour < from) continue;
    if (hour + HOUR > until) break;
    const next = i + 1 < hours.length ? Math.max(first, hours[i + 1].first) : end;
    deleted += await deleteRange(db, first, next, false, observe);
    await setSetting(db, COMPLETE_KEY, hour + HOUR);
    size = await historyBytes(db);
  }
  return deleted;
}
