import type { DaemonContext } from '../context.ts';
import { DueHeap } from '../probes/heap.ts';
import { recordResults, type ResultWriterDeps } from '../probes/results.ts';
import { claimDeadlines, type DeadlineRow, IDS_PER_QUERY, readDeadlines } from './deadline-store.ts';
import type { DeadlineMetrics } from './deadline-metrics.ts';
import { missedResult } from './missed-ping.ts';
import type { DeadlineBoard } from './types.ts';

/** What the judge uses of the daemon: the result writer's, the bus for changes and pings, the clock. */
export type JudgeDeps = ResultWriterDeps & Pick<DaemonContext, 'bus' | 'clock' | 'log'>;

/** Due deadlines judged per transaction. */
const BATCH = 500;
/** setTimeout's longest delay; a later deadline re-arms when the timer fires. */
const MAX_DELAY_MS = 2 ** 30;
/** After a failed write or read (the database away), the same work is tried again this much later. */
const RETRY_MS = 1_000;

interface Entry {
  row: DeadlineRow;
  /** Bumped on each re-push; heap items of older versions are stale. */
  version: number;
}

/**
 * The deadline judge (docs/DECISIONS.md#push-deadlines): one min-heap of (lateAt, id) and one
 * timer armed for the earliest, on the daemon's clock. Nothing scans the push checks per tick:
 * the heap holds every pending deadline, and a change, a deletion or a ping (here or relayed
 * from another pod) re-reads only the checks it names, coalesced per tick.
 *
 * A due deadline is claimed by a conditional update (`late_at` still the one judged) in the
 * transaction that records its MISSED_PING, so each is recorded once whichever pods judge it,
 * and a ping that moved it meanwhile wins.
 */
export class DeadlineJudge implements DeadlineBoard {
  private readonly entries = new Map<number, Entry>();
  private heap = new DueHeap();
  private version = 0;
  private timer: NodeJS.Timeout | undefined;
  private pending = new Set<number>();
  private reloadScheduled = false;
  /** Loads and re-reads run one after another, so an older read never lands after a newer one. */
  private reads: Promise<void> = Promise.resolve();
  private judging: Promise<void> | undefined;
  private stopped = false;
  private offJump: (() => void) | undefined;

  private readonly ctx: JudgeDeps;
  private readonly metrics: DeadlineMetrics;

  constructor(ctx: JudgeDeps, metrics: DeadlineMetrics) {
    this.ctx = ctx;
    this.metrics = metrics;
  }

  private readonly onChanged = ({ id }: { id: number }) => this.queueReload(id);
  private readonly onDeleted = ({ id }: { id: number }) => this.entries.delete(id);

  /** Loads every pending deadline; those already past (the daemon was down) are judged at once. */
  async start(): Promise<void> {
    this.ctx.bus.on('resource.changed', this.onChanged);
    this.ctx.bus.on('resource.deleted', this.onDeleted);
    this.ctx.bus.on('push.pinged', this.onChanged);
    this.offJump = this.ctx.clock.onJump(() => this.pump());
    const rows = await readDeadlines(this.ctx.db);
    for (const row of rows) this.put(row);
    const now = this.ctx.clock.now();
    const due = rows.filter((r) => r.lateAt <= now).length;
    this.ctx.log.info({ deadlines: rows.length, due }, 'push deadline judge started');
    this.pump();
  }

  /** Stops judging and waits for what is in flight: nothing is written after it resolves. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.timer);
    this.ctx.bus.off('resource.changed', this.onChanged);
    this.ctx.bus.off('resource.deleted', this.onDeleted);
    this.ctx.bus.off('push.pinged', this.onChanged);
    this.offJump?.();
    await this.judging;
    await this.reads;
  }

  /** A ping at this daemon moved a deadline: re-read it (with what its message needs). */
  moved(resourceId: number): void {
    this.queueReload(resourceId);
  }

  /** Pending deadlines held (tests and the bench). */
  get size(): number {
    return this.entries.size;
  }

  private put(row: DeadlineRow): void {
    const old = this.entries.get(row.id);
    if (old && old.row.lateAt === row.lateAt) {
      old.row = row; // same deadline: its heap item stands
      return;
    }
    const version = ++this.version;
    this.entries.set(row.id, { row, version });
    this.heap.push({ due: row.lateAt, id: row.id, version });
    // Re-pushes leave stale items until their time; rebuild before they outnumber the live ones.
    if (this.heap.size > 2 * this.entries.size + 1024) {
      this.heap = new DueHeap();
      for (const [id, e] of this.entries) this.heap.push({ due: e.row.lateAt, id, version: e.version });
    }
  }

  private queueReload(id: number): void {
    if (this.stopped) return;
    this.pending.add(id);
    if (this.reloadScheduled) return;
    this.reloadScheduled = true;
    setImmediate(() => {
      this.reloadScheduled = false;
      this.reads = this.reads.then(() => this.reload());
    });
  }

  private async reload(): Promise<void> {
    const ids = [...this.pending];
    this.pending.clear();
    for (let i = 0; i < ids.length && !this.stopped; i += IDS_PER_QUERY) {
      const part = ids.slice(i, i + IDS_PER_QUERY);
      let rows: DeadlineRow[];
      try {
        rows = await readDeadlines(this.ctx.db, part);
      } catch (err) {
        if (this.stopped) return;
        this.ctx.log.warn({ err }, 'push deadlines not re-read; trying again');
        this.retry(ids.slice(i));
        return;
      }
      if (this.stopped) return;
      const found = new Map(rows.map((r) => [r.id, r]));
      // Gone, inactive, or judged and not pinged since: nothing to wait for.
      for (const id of part) if (!found.has(id)) this.entries.delete(id);
      for (const row of rows) this.put(row);
    }
    this.pump();
  }

  private retry(ids: number[]): void {
    setTimeout(() => {
      for (const id of ids) this.queueReload(id);
    }, RETRY_MS).unref();
  }

  /** Judges what is due (a batch at a time, one batch in flight), then arms the timer for the next. */
  private pump(): void {
    if (this.stopped || this.judging) return; // the batch in flight pumps when it ends
    clearTimeout(this.timer);
    const now = this.ctx.clock.now();
    const due: Entry[] = [];
    while (due.length < BATCH) {
      const top = this.heap.peek();
      if (!top || top.due > now) break;
      this.heap.pop();
      const entry = this.entries.get(top.id);
      if (entry && entry.version === top.version) due.push(entry);
    }
    if (due.length > 0) {
      this.judging = this.judge(due, now).finally(() => {
        this.judging = undefined;
        this.pump();
      });
      return;
    }
    const top = this.heap.peek();
    if (top) this.timer = setTimeout(() => this.pump(), Math.max(0, Math.min(top.due - now, MAX_DELAY_MS)));
  }

  private async judge(due: Entry[], at: number): Promise<void> {
    const rows = new Map(due.map((e) => [e.row.id, e.row]));
    let claimed = new Set<number>();
    try {
      await recordResults(
        this.ctx,
        due.map(({ row }) => ({ resourceId: row.id, result: missedResult(row, at) })),
        async (trx, items) => {
          claimed = await claimDeadlines(
            trx,
            items.map((i) => rows.get(i.resourceId)!),
          );
          return items.filter((i) => claimed.has(i.resourceId));
        },
      );
    } catch (err) {
      if (this.stopped) return;
      this.ctx.log.warn({ err, deadlines: due.length }, 'missed push deadlines not recorded; trying again');
      this.settle(due, new Set());
      this.retry([...rows.keys()]);
      return;
    }
    const done = this.ctx.clock.now();
    let maxDelayMs = 0;
    for (const id of claimed) {
      const delayMs = done - rows.get(id)!.lateAt;
      maxDelayMs = Math.max(maxDelayMs, delayMs);
      this.metrics.delay.observe(delayMs / 1000);
    }
    this.metrics.missed.inc(claimed.size);
    if (claimed.size > 0) this.ctx.log.debug({ missed: claimed.size, maxDelayMs }, 'push deadlines missed');
    // Not claimed: a ping here or at another pod moved it, or another pod judged it: read what it is now.
    const moved = this.settle(due, claimed);
    for (const id of moved) this.queueReload(id);
  }

  /** Forgets the judged entries (unless re-read meanwhile); returns the ids not claimed. */
  private settle(due: Entry[], claimed: Set<number>): number[] {
    const unclaimed: number[] = [];
    for (const entry of due) {
      if (this.entries.get(entry.row.id) === entry) this.entries.delete(entry.row.id);
      if (!claimed.has(entry.row.id)) unclaimed.push(entry.row.id);
    }
    return unclaimed;
  }
}
