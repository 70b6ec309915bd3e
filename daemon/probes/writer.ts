import type { Logger } from '../logger.ts';
import { type ResultWriterDeps, type RoundRecord, recordResults } from './results.ts';
import type { LocationCheck } from './locations.ts';
import { persistNextRuns } from './next-runs.ts';
import type { ProbeResult } from './types.ts';
import { yieldTurn } from '../util/yield-turn.ts';

/** Results are written in batches of at most this many, or after FLUSH_MS. */
const BATCH = 200;
const FLUSH_MS = 500;
const PERSIST_MS = 5_000;
const PERSIST_ROWS = 4_096;

/** What the batch writer uses of the daemon. */
export type WriterDeps = ResultWriterDeps & { log: Logger };

/**
 * The scheduler's writes: check results in batches (one transaction each,
 * through `recordResults`, results.ts) and `next_run_at` in
 * batches every few seconds. Writes run one after another; after `close()`
 * nothing is written.
 */
export class BatchWriter {
  private readonly ctx: WriterDeps;
  private results: RoundRecord[] = [];
  private nextRuns = new Map<number, number>();
  private flushTimer: NodeJS.Timeout | undefined;
  private readonly persistTimer: NodeJS.Timeout;
  private writing: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(ctx: WriterDeps) {
    this.ctx = ctx;
    this.persistTimer = setInterval(() => this.persist(), PERSIST_MS);
    this.persistTimer.unref();
  }

  /**
   * A round: the decided `result` and, for history, each location's `checks`. `nextRunAt`: the
   * resource's next due time, written in the same UPDATE as its latest columns, so that the
   * separate `next_run_at` batch is left with the resources whose schedule moved without a check.
   */
  addResult(resourceId: number, result: ProbeResult, checks?: LocationCheck[], nextRunAt?: number): void {
    if (this.closed) return;
    if (nextRunAt !== undefined && this.nextRuns.get(resourceId) === nextRunAt) this.nextRuns.delete(resourceId);
    this.results.push({ resourceId, result, checks, nextRunAt });
    if (this.results.length >= BATCH) this.flushResults();
    else this.flushTimer ??= setTimeout(() => this.flushResults(), FLUSH_MS);
  }

  setNextRun(id: number, at: number): void {
    if (!this.closed) this.nextRuns.set(id, at);
  }

  forget(id: number): void {
    this.nextRuns.delete(id);
  }

  /** Writes what is pending, then refuses further writes. */
  async close(): Promise<void> {
    clearInterval(this.persistTimer);
    this.flushResults();
    this.persist();
    this.closed = true;
    await this.writing;
  }

  private flushResults(): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.results.length === 0 || this.closed) return;
    const batch = this.results;
    this.results = [];
    this.writing = this.writing
      .then(() => recordResults(this.ctx, batch).then(() => undefined))
      .catch((err) => this.ctx.log.error({ err, results: batch.length }, 'writing check results failed'));
  }

  /**
   * Writes the pending next runs, PERSIST_ROWS to a transaction with a turn of the event loop
   * between them: after a restart that spread a million overdue resources, one transaction held
   * the loop (and every check due meanwhile) for seconds.
   */
  private persist(): void {
    if (this.nextRuns.size === 0 || this.closed) return;
    const all = [...this.nextRuns];
    this.nextRuns = new Map();
    for (let i = 0; i < all.length; i += PERSIST_ROWS) {
      const batch = new Map(all.slice(i, i + PERSIST_ROWS));
      this.writing = this.writing
        .then(yieldTurn)
        .then(() => persistNextRuns(this.ctx.db, batch))
        .catch((err) => this.ctx.log.error({ err }, 'persisting next runs failed'));
    }
  }
}
