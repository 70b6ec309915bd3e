import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { ProbeConfig } from '../config/probe-config.ts';
import { type PauseObserver, pruneToBudget } from './history-prune.ts';
import { rolledUpUntil, runRollups } from './rollups.ts';

/**
 * The history job: rollups and retention, then the size budget (only over rolled-up hours).
 * Every statement is bounded; `observe` sees each pruning statement's duration.
 */
export async function runHistoryJob(
  db: Kysely<Database>,
  config: Pick<ProbeConfig, 'historyRetentionDays' | 'historyMaxBytes'>,
  now = Date.now(),
  observe?: PauseObserver,
) {
  const rolled = await runRollups(db, config.historyRetentionDays, now, observe);
  const thinned = await pruneToBudget(db, config.historyMaxBytes, await rolledUpUntil(db), observe);
  return { ...rolled, thinned };
}
