import type { Expression, ExpressionBuilder, SqlBool } from 'kysely';
import type { DaemonContext } from '../context.ts';
import { locationsOf, sameLocations } from './resource-locations.ts';
import { conditionsOf, sameConditions } from './resource-conditions.ts';
import type { Database } from '../store/schema.ts';
import type { ProbeConfig } from '../config/probe-config.ts';
import { DueHeap } from './heap.ts';
import { hostKey } from './host-key.ts';
import { DAEMON, DAEMON_LOCATION, decide, type Location, type LocationCheck, type Quorum } from './locations.ts';
import { observePhases, type ProbeMetrics, statusValue } from './metrics.ts';
import { persistNextRuns } from './next-runs.ts';
import { ownsEverything, type ResourceOwnership, takeoverDue } from './ownership.ts';
import type { Prober } from './prober.ts';
import { type RoundDeps, runRound } from './rounds.ts';
import { type CheckInput, PROBE_COLUMNS as COLUMNS, type ProbeRow as Row, probeInputOf } from './probe-input.ts';
import { requestBox } from './http-request-store.ts';
import { yieldTurn } from '../util/yield-turn.ts';
import { BatchWriter, type WriterDeps } from './writer.ts';

interface Entry {
  input: CheckInput;
  /** The request columns as stored: an edit of any request field (secrets included) reschedules. */
  request: string;
  intervalMs: number;
  /** Shared, as are a seed request key, the daemon-only locations and no conditions: at a million entries each copy costs. */
  host: string;
  /** Where it is checked (docs/API.md#check-locations); `local`: the daemon is one of them (its checks take the daemon's caps). */
  locations: Location[];
  quorum: Quorum;
  local: boolean;
  /** Bumped on every reschedule; heap items of older versions are stale. */
  version: number;
  /** The next time it is due. */
  due: number;
  removed: boolean;
}

/** What the scheduler uses of the daemon: its rounds, its result writer, and the bus for resource changes. */
export type SchedulerDeps = RoundDeps & WriterDeps & Pick<DaemonContext, 'bus'>;

const selectResources = (ctx: SchedulerDeps) => ctx.db.selectFrom('resources').select(COLUMNS);

/** The request columns of a row as one string (sealed secrets compare as stored: a PATCH that keeps them does not reseal). */
const requestKey = (row: Row) => {
  const key = JSON.stringify([row.http_request, row.http_secrets, row.timeout_seconds, row.upside_down]);
  return key === SEED_REQUEST ? SEED_REQUEST : key;
};
/** The request key of a resource that sets no request field (most of them): one string for all. */
const SEED_REQUEST = '[null,null,null,null]';
/** The locations and conditions of most resources, shared by their entries. */
const DAEMON_ONLY: Location[] = [DAEMON_LOCATION];
const NO_CONDITIONS: string[] = [];

/** More new or changed resources than this in one reload have their first checks spread. */
const BURST = 1_000;

/** Rows read per query at start. */
const START_PAGE = 2_000;

/** At start, overdue resources are spread over at most this window (their interval if shorter). */
const MAX_SPREAD_MS = 5 * 60_000;

/**
 * The central scheduler: one min-heap of due times for every active resource
 * and one timer armed for the earliest. Fixed rate: the next run is the
 * previous due time plus the interval, whatever the check's duration. A
 * global and a per-host cap bound concurrent checks; excess due checks wait
 * in the heap (global) or a per-host FIFO.
 *
 * Each due time starts one round: the check at every location of the
 * resource at once (daemon/probes/rounds.ts); an agent location goes over
 * the agent's tunnel. The caps are the daemon's own: a round checked only by
 * agents takes none (each agent bounds its own), and the quorum decides the
 * round's status (daemon/probes/locations.ts).
 */
export class Scheduler {
  private readonly ctx: SchedulerDeps;
  private readonly prober: Prober;
  private readonly metrics: ProbeMetrics;
  private readonly config: ProbeConfig;
  private readonly entries = new Map<number, Entry>();
  private readonly heap = new DueHeap();
  /** Resources with a check running or waiting for a per-host slot. */
  private readonly busy = new Set<number>();
  private readonly hostRunning = new Map<string, number>();
  private readonly hostWaiting = new Map<string, Array<{ entry: Entry; due: number }>>();
  /** One string per host key: thousands of resources share a host. */
  private readonly hosts = new Map<string, string>();
  private running = 0;
  /** Rounds checked by agents only: not under the daemon's caps. */
  private remote = 0;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private writer: BatchWriter | undefined;
  private pendingReload = new Set<number>();
  private reloadScheduled = false;
  private stopped = false;
  private closed = false;
  private readonly idle = new Set<() => void>();
  /** Scheduled checks started since the scheduler started (a pod's load in the topology). */
  started = 0;
  /** Called as each check starts, with the time it was due (tests and the bench observe the schedule). */
  onRun: ((resourceId: number, due: number) => void) | undefined;

  /** Which resources this pod schedules (all of them, but for pods sharing PostgreSQL). */
  private readonly ownership: ResourceOwnership;

  constructor(
    ctx: SchedulerDeps,
    prober: Prober,
    metrics: ProbeMetrics,
    config: ProbeConfig,
    ownership: ResourceOwnership = ownsEverything,
  ) {
    this.ctx = ctx;
    this.prober = prober;
    this.metrics = metrics;
    this.config = config;
    this.ownership = ownership;
  }

  private readonly onChanged = ({ id }: { id: number }) => this.queueReload(id);
  private readonly onDeleted = ({ id }: { id: number }) => this.remove(id);

  async start(): Promise<void> {
    this.writer = new BatchWriter(this.ctx);
    this.ctx.bus.on('resource.changed', this.onChanged);
    this.ctx.bus.on('resource.deleted', this.onDeleted);
    const locations = await locationsOf(this.ctx.db);
    let count = 0;
    // In pages by id, with a turn of the event loop between them: a million rows read at once were
    // all held at the peak, and checks falling due while the pages load start on time (SQLite
    // answers synchronously, so without the turn no timer fired until the last page was in).
    for (let after = 0; ; await yieldTurn()) {
      const rows = await selectResources(this.ctx)
        .where('active', '=', 1)
        .where('resource_type', '!=', 'PUSH')
        .where('id', '>', after)
        .orderBy('id')
        .limit(START_PAGE)
        .execute();
      if (rows.length === 0) break;
      after = rows[rows.length - 1].id;
      count += rows.length;
      // The time of this page, not of the first: a million resources load in about 20 s, with
      // checks running between pages, and what fell due meanwhile is as overdue as what fell due
      // while the daemon was down (taken as due at the start's time, it started up to 20 s late).
      const now = Date.now();
      for (const row of rows) {
        if (!this.ownership.owns(row.id)) continue;
        const intervalMs = row.interval_seconds * 1000;
        // Resume on schedule; what fell due while the daemon was down is spread, not fired at once.
        const due =
          row.next_run_at !== null && Number(row.next_run_at) >= now
            ? Number(row.next_run_at)
            : now + Math.random() * Math.min(intervalMs, MAX_SPREAD_MS);
        this.upsert(row as Row, due, locations.get(row.id), due !== Number(row.next_run_at));
      }
    }
    this.ctx.log.info({ resources: count }, 'probe scheduler started');
    this.pump();
  }

  /** Stops dispatching, waits a little for running checks, then writes what is pending. Nothing is written afterwards. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.ctx.bus.off('resource.changed', this.onChanged);
    this.ctx.bus.off('resource.deleted', this.onDeleted);
    clearTimeout(this.timer);
    if (this.running + this.remote > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(this.config.httpTimeoutMs, 5_000));
        this.idle.add(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    await this.writer?.close();
    this.closed = true;
  }

  /** `persist`: write `due` as `next_run_at` (not when it is what the row already holds). */
  private upsert(row: Row, due: number, where: Location[] = DAEMON_ONLY, persist = true): void {
    const input = probeInputOf(row, requestBox(this.ctx));
    if (input.conditions?.length === 0) input.conditions = NO_CONDITIONS;
    const locations = where.length === 1 && where[0] === DAEMON_LOCATION ? DAEMON_ONLY : where;
    const old = this.entries.get(row.id);
    if (input.unopened) this.ctx.log.warn({ resourceId: row.id }, input.unopened);
    const host = hostKey(input);
    if (!this.hosts.has(host)) this.hosts.set(host, host);
    const entry: Entry = {
      // The API keeps intervals at 10 s or more; the floor only guards the loop against a bad row.
      input,
      request: requestKey(row),
      intervalMs: Math.max(1, row.interval_seconds) * 1000,
      host: this.hosts.get(host)!,
      locations,
      quorum: row.quorum as Quorum,
      local: locations.some((l) => l.agentId === 0),
      version: (old?.version ?? 0) + 1,
      due,
      removed: false,
    };
    if (old) {
      old.removed = true;
      const gone = old.locations.filter((l) => !locations.some((n) => n.agentId === l.agentId));
      if (gone.length)
        this.metrics.forget(
          row.id,
          gone.map((l) => l.name),
        );
    }
    this.entries.set(row.id, entry);
    this.heap.add(due, row.id, entry.version);
    if (persist) this.writer!.setNextRun(row.id, due);
    this.metrics.scheduled.set(this.entries.size);
    if (due < this.timerAt) this.arm();
  }

  private remove(id: number): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    entry.removed = true;
    this.entries.delete(id);
    this.writer?.forget(id);
    this.metrics.forget(
      id,
      entry.locations.map((l) => l.name),
    );
    this.metrics.scheduled.set(this.entries.size);
  }

  /** Changes arrive in bursts (bulk creation): coalesce them into one query. */
  private queueReload(id: number): void {
    if (this.stopped) return;
    this.pendingReload.add(id);
    if (this.reloadScheduled) return;
    this.reloadScheduled = true;
    setImmediate(() => void this.reload().catch((err) => this.ctx.log.error({ err }, 'scheduler reload failed')));
  }

  private async reload(): Promise<void> {
    this.reloadScheduled = false;
    const ids = [...this.pendingReload];
    this.pendingReload.clear();
    const burst = ids.length > BURST;
    const started = Date.now();
    for (let i = 0; i < ids.length && !this.stopped; i += 500) {
      const part = ids.slice(i, i + 500);
      const rows = await this.ctx.db.selectFrom('resources').select(COLUMNS).where('id', 'in', part).execute();
      const locations = await locationsOf(this.ctx.db, part);
      if (this.stopped) return;
      const found = new Set(rows.map((r) => r.id));
      const position = burst ? new Map(part.map((id, k) => [id, i + k])) : undefined;
      for (const id of part) if (!found.has(id)) this.remove(id);
      for (const row of rows as Row[]) {
        // PUSH resources are not checked: they wait for pings (daemon/push/).
        if (row.active !== 1 || row.resource_type === 'PUSH' || !this.ownership.owns(row.id)) {
          this.remove(row.id);
          continue;
        }
        const old = this.entries.get(row.id);
        const where = locations.get(row.id) ?? [DAEMON_LOCATION];
        const same =
          old &&
          old.input.type === row.resource_type &&
          old.input.target === row.target &&
          old.input.skipTLS === (row.skip_tls === 1) &&
          old.input.recursive === (row.recursive === 1) &&
          sameConditions(old.input.conditions, conditionsOf(row.conditions)) &&
          old.request === requestKey(row) &&
          old.intervalMs === Math.max(1, row.interval_seconds) * 1000 &&
          old.quorum === row.quorum &&
          sameLocations(old.locations, where);
        if (same) continue;
        // New or changed: check now, then at its interval. A burst (a bulk apply) is spread as at
        // start, in the order it came: checked all at once, its beats would stay bunched forever.
        const intervalMs = Math.max(1, row.interval_seconds) * 1000;
        const due = position ? started + (position.get(row.id)! / ids.length) * Math.min(intervalMs, MAX_SPREAD_MS) : Date.now();
        this.upsert(row as Row, due, where);
      }
    }
    this.pump();
  }

  private arm(): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    const topDue = this.heap.peekDue();
    // At the global cap, the next completion pumps; a timer for an overdue item would only spin.
    if (topDue === Infinity || (this.running >= this.config.concurrency && topDue <= Date.now())) {
      this.timerAt = Infinity;
      return;
    }
    this.timerAt = topDue;
    this.timer = setTimeout(
      () => {
        this.timerAt = Infinity;
        this.pump();
      },
      Math.max(0, Math.min(topDue - Date.now(), 2 ** 30)),
    );
  }

  /** Starts every due check the caps allow, then re-arms the timer for the next due time. */
  private pump(): void {
    if (this.stopped) return;
    const now = Date.now();
    for (;;) {
      const due = this.heap.peekDue();
      if (due > now) break;
      const id = this.heap.peekId();
      const entry = this.entries.get(id);
      const stale = !entry || entry.version !== this.heap.peekVersion() || entry.removed;
      // The global cap holds back the daemon's own checks; rounds of agents only are bounded by each agent.
      if (!stale && entry.local && this.running >= this.config.concurrency) break;
      this.heap.pop();
      if (stale) continue;
      // Fixed rate: the next run keeps the phase of this one; missed beats are skipped, not bunched.
      let next = due + entry.intervalMs;
      if (next <= now) next += Math.ceil((now - next + 1) / entry.intervalMs) * entry.intervalMs;
      this.heap.add(next, id, entry.version);
      entry.due = next;
      this.writer!.setNextRun(id, next);
      if (this.busy.has(id)) continue; // the previous check is still running: skip this beat
      this.busy.add(id);
      if (entry.local && (this.hostRunning.get(entry.host) ?? 0) >= this.config.perHostConcurrency) {
        const queue = this.hostWaiting.get(entry.host) ?? [];
        queue.push({ entry, due });
        this.hostWaiting.set(entry.host, queue);
        continue;
      }
      this.run(entry, due);
    }
    this.arm();
  }

  private run(entry: Entry, due: number): void {
    if (entry.local) {
      this.running++;
      this.hostRunning.set(entry.host, (this.hostRunning.get(entry.host) ?? 0) + 1);
      this.metrics.inFlight.set(this.running);
      this.metrics.lag.observe({ location: DAEMON }, Math.max(0, Date.now() - due) / 1000);
    } else {
      this.remote++;
    }
    this.started++;
    this.onRun?.(entry.input.resourceId, due);
    // An agent's lag counts until its check started there, its queue included.
    const started = (location: Location, delayMs: number) =>
      this.metrics.lag.observe({ location: location.name }, Math.max(0, delayMs) / 1000);
    void runRound(this.ctx, this.prober, entry.input, entry.locations, due, started).then((checks) => this.done(entry, checks));
  }

  private done(entry: Entry, checks: LocationCheck[]): void {
    if (entry.local) {
      this.running--;
      const left = (this.hostRunning.get(entry.host) ?? 1) - 1;
      if (left > 0) this.hostRunning.set(entry.host, left);
      else this.hostRunning.delete(entry.host);
      this.metrics.inFlight.set(this.running);
    } else {
      this.remote--;
    }
    this.busy.delete(entry.input.resourceId);
    if (this.running + this.remote === 0) for (const resolve of this.idle) resolve();
    if (this.closed) return;

    const { type, resourceId } = entry.input;
    const current = !entry.removed || this.entries.has(resourceId);
    for (const { location, ran, result } of checks) {
      const labels = { type, location: location.name };
      const seconds = result.durationMs / 1000;
      if (ran) {
        this.metrics.duration.observe(labels, seconds);
        observePhases(this.metrics, labels, result.timing);
        this.metrics.checks.inc({ ...labels, status: result.status });
        if (result.status !== 'AVAILABLE') this.metrics.failures.inc(labels);
      }
      if (current)
        this.metrics.resources.set(
          resourceId,
          type,
          location.name,
          statusValue(ran ? result.status : 'UNKNOWN'),
          ran ? seconds : undefined,
          result.timing,
        );
    }
    this.writer!.addResult(resourceId, decide(entry.quorum, checks), checks, entry.removed ? undefined : entry.due);

    if (this.stopped) return;
    const queue = this.hostWaiting.get(entry.host);
    while (queue?.length) {
      const next = queue.shift()!;
      if (queue.length === 0) this.hostWaiting.delete(entry.host);
      if (next.entry.removed) {
        this.busy.delete(next.entry.input.resourceId);
        continue;
      }
      this.run(next.entry, next.due);
      break;
    }
    this.pump();
  }

  /**
   * Takes over resources this pod now owns (pods: shards it leased), due as
   * `takeoverDue` says, so that a beat its previous pod ran is not run again.
   */
  async adopt(which: (eb: ExpressionBuilder<Database, 'resources'>) => Expression<SqlBool>): Promise<number> {
    if (this.stopped) return 0;
    const rows = await selectResources(this.ctx)
      .select('latest_checked_at')
      .where('active', '=', 1)
      .where('resource_type', '!=', 'PUSH')
      .where(which)
      .execute();
    if (this.stopped) return 0;
    const now = Date.now();
    let adopted = 0;
    for (const row of rows) {
      if (this.entries.has(row.id) || !this.ownership.owns(row.id)) continue;
      const intervalMs = Math.max(1, row.interval_seconds) * 1000;
      const last = row.latest_checked_at === null ? null : Number(row.latest_checked_at);
      this.upsert(row as Row, takeoverDue(row.next_run_at === null ? null : Number(row.next_run_at), last, intervalMs, now));
      adopted++;
    }
    this.pump();
    return adopted;
  }

  /**
   * Stops scheduling the resources this pod no longer owns, and writes their
   * next due times first, so that the pod taking them over resumes on time.
   */
  async release(): Promise<number> {
    const handover = new Map<number, number>();
    for (const [id, entry] of this.entries) {
      if (this.ownership.owns(id)) continue;
      handover.set(id, entry.due);
      this.remove(id);
    }
    if (handover.size > 0) await persistNextRuns(this.ctx.db, handover);
    return handover.size;
  }

  /** When a resource is due next (undefined when not scheduled). */
  dueOf(id: number): number | undefined {
    return this.entries.get(id)?.due;
  }

  /** For tests and the bench: what is scheduled and running now. */
  stats(): { scheduled: number; running: number } {
    return { scheduled: this.entries.size, running: this.running };
  }
}
