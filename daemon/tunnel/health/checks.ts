import type { DaemonContext } from '../../context.ts';
import type { TunnelControl } from '../../tunnel-control.ts';
import { publishTopology } from '../../tunnel-admin/topology-events.ts';
import { CoalescedReload } from '../../util/coalesced.ts';
import type { PoolHealthState } from '../pool/health-state.ts';
import { type PlannedCheck, planChecks } from './plan.ts';
import { remoteHealthCheck } from './spec.ts';
import { healthOf, Streak } from './streak.ts';
import { dropVerdict, touchVerdict, writeVerdict } from './verdict-store.ts';

/** Health checks running at once on this pod, all routes together; the others wait their turn. */
export const MAX_RUNNING = 16;
/** An unchanged verdict's checked_at is written at most this often (or once per interval when that is longer). */
export const TOUCH_EVERY_MS = 10_000;

type Deps = Pick<DaemonContext, 'db' | 'log' | 'events' | 'config' | 'draining'>;

/** One agent of one route, as this pod checks it. */
interface Job {
  plan: PlannedCheck;
  streak: Streak;
  timer?: NodeJS.Timeout;
  due: number;
  running: boolean;
  queued: boolean;
  /** When its row was last written (0: it has none from this pod). */
  writtenAt: number;
  /** Its database writes, one after another. */
  writes: Promise<void>;
}

/**
 * The target health checks of the agents whose sessions this pod holds (docs/DECISIONS.md#target-health-checks):
 * each agent of each health-checked route is checked every `intervalSeconds` through its own session
 * (the monitoring engine's check, run by the agent against its own target), first at a random point
 * of the first interval so that routes do not check in step, at most MAX_RUNNING at once. Verdicts go
 * to the balancer's PoolHealthState, to `route_agent_health` (so that the other pods steer by them)
 * and out as ROUTE_HEALTH. Jobs of agents held elsewhere only wait: the pod holding them checks.
 */
export class HealthChecks {
  readonly #ctx: Deps;
  readonly #held: (agentId: number) => boolean;
  readonly #probe: TunnelControl['probeAgent'];
  readonly #state: PoolHealthState;
  #jobs = new Map<string, Job>();
  readonly #waiting: Job[] = [];
  #running = 0;
  #closed = false;
  readonly #reload = new CoalescedReload(() => this.#load());

  constructor(ctx: Deps, held: (agentId: number) => boolean, probe: TunnelControl['probeAgent'], state: PoolHealthState) {
    this.#ctx = ctx;
    this.#held = held;
    this.#probe = probe;
    this.#state = state;
  }

  /** The routes changed: start, change and stop checks to match. Never rejects. */
  sync(): Promise<void> {
    return this.#reload.run().catch((err) => {
      if (!this.#ctx.draining) this.#ctx.log.error({ err }, 'tunnel: loading health checks failed');
    });
  }

  /** The routes and agents checked (held here or not), for the verdicts of other pods. */
  plannedRoutes(agentId: number): number[] {
    return [...this.#jobs.values()].filter((j) => j.plan.agentId === agentId).map((j) => j.plan.routeId);
  }

  /** An agent's session opened here: its checks run now rather than at their next turn. */
  connected(agentId: number): void {
    for (const job of this.#jobs.values()) if (job.plan.agentId === agentId && !job.running) this.#schedule(job, 0);
  }

  /** An agent's session here ended: its verdicts go (it is checked again where it reconnects). */
  disconnected(agentId: number): void {
    for (const job of this.#jobs.values()) if (job.plan.agentId === agentId) this.#drop(job);
  }

  close(): void {
    this.#closed = true;
    for (const job of this.#jobs.values()) clearTimeout(job.timer);
    this.#waiting.length = 0;
  }

  async #load(): Promise<void> {
    const plan = await planChecks(this.#ctx.db);
    if (this.#closed) return;
    const jobs = new Map<string, Job>();
    for (const p of plan) {
      const job = this.#jobs.get(p.key);
      if (job) {
        const interval = job.plan.spec.intervalMs;
        job.plan = p;
        if (p.spec.intervalMs !== interval && !job.running) this.#schedule(job, Math.random() * p.spec.intervalMs);
        jobs.set(p.key, job);
        continue;
      }
      const fresh: Job = { plan: p, streak: new Streak(), due: 0, running: false, queued: false, writtenAt: 0, writes: Promise.resolve() };
      jobs.set(p.key, fresh);
      this.#schedule(fresh, Math.random() * p.spec.intervalMs);
    }
    const routes = new Set(plan.map((p) => p.routeId));
    for (const [key, job] of this.#jobs) {
      if (jobs.has(key)) continue;
      clearTimeout(job.timer);
      this.#drop(job);
      // A route without a health check any more (or gone): every verdict of it goes, other pods' too.
      if (!routes.has(job.plan.routeId)) this.#state.forget(job.plan.routeId);
      else this.#state.set(job.plan.routeId, job.plan.agentId, null);
    }
    this.#jobs = jobs;
  }

  #schedule(job: Job, delayMs: number): void {
    clearTimeout(job.timer);
    if (this.#closed) return;
    job.due = Date.now() + delayMs;
    job.timer = setTimeout(() => this.#tick(job), delayMs);
    job.timer.unref();
  }

  #tick(job: Job): void {
    if (this.#closed || this.#jobs.get(job.plan.key) !== job || job.running || job.queued) return;
    if (!this.#held(job.plan.agentId)) {
      this.#drop(job); // the agent went (or moved to another pod, which checks it now)
      return this.#schedule(job, job.plan.spec.intervalMs);
    }
    job.queued = true;
    this.#waiting.push(job);
    this.#pump();
  }

  #pump(): void {
    while (this.#running < MAX_RUNNING && this.#waiting.length) {
      const job = this.#waiting.shift()!;
      job.queued = false;
      this.#running++;
      job.running = true;
      void this.#run(job).finally(() => {
        this.#running--;
        job.running = false;
        // Fixed rate from the last due time; a check that overran its interval is followed at once.
        if (this.#jobs.get(job.plan.key) === job) this.#schedule(job, Math.max(0, job.due + job.plan.spec.intervalMs - Date.now()));
        this.#pump();
      });
    }
  }

  async #run(job: Job): Promise<void> {
    const { plan } = job;
    const check = remoteHealthCheck(plan.type, plan.spec, plan.target, this.#ctx.config.probes);
    const outcome = await this.#probe(plan.agentId, plan.agentName, check);
    // Closed, the route changed under it or the agent left meanwhile: the outcome is nobody's any more.
    if (this.#closed || this.#jobs.get(plan.key) !== job || !this.#held(plan.agentId)) return;
    const after = { unhealthy: plan.spec.unhealthyAfter, healthy: plan.spec.healthyAfter };
    const changed = !outcome.ran
      ? job.streak.record({ skipped: outcome.message }, after)
      : outcome.status === 'UNKNOWN'
        ? job.streak.record({ skipped: outcome.message }, after)
        : job.streak.record(
            { pass: outcome.status === 'AVAILABLE', error: outcome.status === 'AVAILABLE' ? null : outcome.message },
            after,
          );
    const { healthy, error } = job.streak;
    if (healthy === null) return;
    const now = Date.now();
    if (changed) {
      this.#state.set(plan.routeId, plan.agentId, healthy);
      publishTopology(this.#ctx, 'ROUTE_HEALTH', {
        routeId: plan.routeId,
        agentId: plan.agentId,
        health: healthOf(healthy),
        inRotation: healthy,
        error,
      });
      job.writtenAt = now;
      await this.#write(job, () => writeVerdict(this.#ctx.db, plan.routeId, plan.agentId, healthy, now, error));
    } else if (now - job.writtenAt >= Math.max(TOUCH_EVERY_MS, plan.spec.intervalMs)) {
      job.writtenAt = now;
      await this.#write(job, () => touchVerdict(this.#ctx.db, plan.routeId, plan.agentId, now));
    }
  }

  /** Forgets what this pod found of a job's agent (its verdict, its row) and announces it. */
  #drop(job: Job): void {
    const { plan } = job;
    const had = job.streak.healthy !== null;
    job.streak = new Streak();
    if (!had) return;
    this.#state.set(plan.routeId, plan.agentId, null);
    publishTopology(this.#ctx, 'ROUTE_HEALTH', {
      routeId: plan.routeId,
      agentId: plan.agentId,
      health: 'UNKNOWN',
      inRotation: this.#held(plan.agentId),
      error: null,
    });
    job.writtenAt = 0;
    void this.#write(job, () => dropVerdict(this.#ctx.db, plan.routeId, plan.agentId));
  }

  /** One job's writes in order (a drop never overtakes the verdict before it); a failure is logged. */
  #write(job: Job, write: () => Promise<void>): Promise<void> {
    job.writes = job.writes.then(write).catch((err) => {
      if (!this.#ctx.draining) this.#ctx.log.warn({ err, routeId: job.plan.routeId }, 'tunnel: recording a health verdict failed');
    });
    return job.writes;
  }
}
