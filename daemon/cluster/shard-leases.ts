import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Logger } from '../logger.ts';
import { claimShards, heartbeat, leaveCluster, liveMembers, releaseShards, renewLeases } from '../store/dialect/postgres-leases.ts';
import { SHARDS } from '../store/migrations/0012-pods.ts';
import type { Database } from '../store/schema.ts';

/** How often a member renews its leases and looks at the others; a lease lasts LEASE_MS past its last renewal. */
export const TICK_MS = 2_000;
export const LEASE_MS = 6_000;
/** A member stops using its shards this long before its leases could run out in the database. */
const SAFETY_MS = 500;
/** Rows of members silent this long are deleted. */
const FORGET_MS = 60_000;

/** What the leases need of the daemon: its database and its log. */
export interface LeaseDeps {
  db: Kysely<Database>;
  log: Logger;
}

export interface ShardHandlers {
  /** The member now holds these shards: schedule their resources. */
  gained(shards: number[]): Promise<unknown>;
  /** The member no longer holds these shards: stop, and write what the next holder needs. Must not throw. */
  lost(): Promise<unknown>;
}

export interface ShardLoad {
  podName: string;
  apiUrl: string | null;
  edgeUrl: string | null;
  resources: () => number;
  checksTotal: () => number;
}

/**
 * Checks exactly once across pods (DECISIONS, "Several daemons"): resources
 * fall into SHARDS shards (`id % SHARDS`); each member (a running daemon)
 * leases a fair share of the shards in the database and schedules only their
 * resources. Every TICK_MS it heartbeats, renews its leases, counts the live
 * members, gives back shards above its share and claims free or expired ones
 * below it (FOR UPDATE SKIP LOCKED). A killed member's leases run out after
 * LEASE_MS and the others claim them; a new member gets its share as the
 * others give theirs back, within a few ticks, with no restart.
 *
 * A lease is used only while it is certainly valid: until the renewal's send
 * time plus LEASE_MS (less a margin), measured on this process's monotonic
 * clock, which ends before the database's own deadline (set when the
 * renewal ran, later). A member that cannot reach the database stops using
 * its shards then, and claims no work until it can.
 */
export class ShardLeases {
  readonly instance = randomUUID();
  readonly #ctx: LeaseDeps;
  readonly #handlers: ShardHandlers;
  readonly #load: ShardLoad;
  readonly #startedAt = Date.now();
  #held = new Set<number>();
  #validUntil = 0;
  #timer: NodeJS.Timeout | undefined;
  #watchdog: NodeJS.Timeout | undefined;
  #ticking: Promise<void> = Promise.resolve();
  #stopped = false;
  #failing = false;

  constructor(ctx: LeaseDeps, handlers: ShardHandlers, load: ShardLoad) {
    this.#ctx = ctx;
    this.#handlers = handlers;
    this.#load = load;
  }

  owns(resourceId: number): boolean {
    return this.#held.has(resourceId % SHARDS);
  }

  /** Whether this member runs the cluster's once-only jobs (rollups): the holder of shard 0. */
  get leader(): boolean {
    return this.#held.has(0);
  }

  get shards(): number[] {
    return [...this.#held].sort((a, b) => a - b);
  }

  /** Joins: the first tick runs now (its shards are scheduled when it resolves), then every TICK_MS. */
  async start(): Promise<void> {
    await this.#tickOnce();
    this.#timer = setInterval(() => void this.#tickOnce(), TICK_MS);
    this.#timer.unref();
    this.#watchdog = setInterval(() => this.#expireIfStale(), 250);
    this.#watchdog.unref();
  }

  /** Leaves: stops using every shard (the caller's `lost` writes what is needed), then gives the leases back. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    clearInterval(this.#watchdog);
    await this.#ticking;
    this.#held = new Set();
    await this.#handlers.lost();
    await leaveCluster(this.#ctx.db, this.instance).catch((err) =>
      this.#ctx.log.warn({ err }, 'leaving the cluster failed; the leases run out by themselves'),
    );
  }

  #tickOnce(): Promise<void> {
    this.#ticking = this.#ticking.then(() => (this.#stopped ? undefined : this.#tick()));
    return this.#ticking;
  }

  async #tick(): Promise<void> {
    const sent = performance.now();
    const db = this.#ctx.db;
    try {
      await heartbeat(
        db,
        {
          instance: this.instance,
          podName: this.#load.podName,
          apiUrl: this.#load.apiUrl,
          edgeUrl: this.#load.edgeUrl,
          startedAt: this.#startedAt,
          shards: this.#held.size,
          resources: this.#load.resources(),
          checksTotal: this.#load.checksTotal(),
        },
        FORGET_MS,
      );
      const renewed = new Set(await renewLeases(db, this.instance, LEASE_MS));
      this.#validUntil = sent + LEASE_MS - SAFETY_MS;
      if (this.#failing) this.#ctx.log.info({ shards: renewed.size }, 'shard leases renewed again');
      this.#failing = false;
      // What the database says we hold is what we run: shards taken from us (our lease ran out while we
      // could not renew) stop now; shards we had stopped using (the watchdog) but still hold run again.
      await this.#set(
        renewed,
        [...renewed].filter((s) => !this.#held.has(s)),
      );
      const members = await liveMembers(db, LEASE_MS);
      const target = fairShare(members, this.instance);
      if (renewed.size > target) {
        const extra = [...renewed].sort((a, b) => b - a).slice(0, renewed.size - target);
        const keep = new Set([...renewed].filter((s) => !extra.includes(s)));
        await this.#set(keep);
        await releaseShards(db, this.instance, extra);
        this.#ctx.log.info({ released: extra.length, held: keep.size, members: members.length }, 'shards handed over');
      } else if (renewed.size < target) {
        const claimed = await claimShards(db, this.instance, LEASE_MS, target - renewed.size);
        if (claimed.length > 0) {
          await this.#set(new Set([...renewed, ...claimed]), claimed);
          this.#ctx.log.info({ claimed: claimed.length, held: this.#held.size, members: members.length }, 'shards claimed');
        }
      }
    } catch (err) {
      if (!this.#failing)
        this.#ctx.log.warn(
          { err },
          'shard lease tick failed: this pod keeps its shards until the leases could run out, then claims no work until the database answers',
        );
      this.#failing = true;
    }
  }

  /** Changes what is held: first stop what is lost, then schedule what is gained. */
  async #set(next: Set<number>, gained: number[] = []): Promise<void> {
    const losing = [...this.#held].some((s) => !next.has(s));
    this.#held = next;
    if (losing) await this.#handlers.lost();
    if (gained.length > 0) await this.#handlers.gained(gained);
  }

  /** No renewal in time (database unreachable): stop checking before another pod may start. */
  #expireIfStale(): void {
    if (this.#held.size === 0 || performance.now() < this.#validUntil) return;
    this.#ctx.log.error(
      { shards: this.#held.size },
      'shard leases not renewed in time: this pod stops running checks until it can renew them',
    );
    this.#held = new Set();
    void this.#handlers.lost();
  }
}

/** The shards a member should hold: SHARDS split evenly among the live members, the oldest taking the remainder. */
export function fairShare(members: string[], instance: string): number {
  const index = members.indexOf(instance);
  if (index < 0 || members.length === 0) return 0;
  const base = Math.floor(SHARDS / members.length);
  return base + (index < SHARDS % members.length ? 1 : 0);
}
