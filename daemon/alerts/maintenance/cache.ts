import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Bus } from '../../bus.ts';
import type {} from '../../context.ts';
import type { Logger } from '../../logger.ts';
import type { Database, MaintenanceWindowsTable } from '../../store/schema.ts';
import { CoalescedReload } from '../../util/coalesced.ts';
import { currentOrNext, isActive, type Occurrence, type WindowSchedule } from './schedule.ts';
import { type Weekday, WEEKDAYS } from './zoned-time.ts';

export type WindowRow = Selectable<MaintenanceWindowsTable>;

/** A window as the cache holds it: its schedule, its targets, and the resources it covers through groups. */
export interface CachedWindow {
  id: number;
  name: string;
  schedule: WindowSchedule;
  resourceIds: number[];
  groupIds: number[];
  agentIds: number[];
  /** Direct resources plus the members of its groups, at the last reload. */
  covers: Set<number>;
}

/** How often the windows are read again at the latest: other pods on the database may have changed them. */
export const RELOAD_EVERY_MS = 60_000;

declare module '../../context.ts' {
  interface DaemonContext {
    /** The maintenance windows in memory, for the incident engine and the status pages (built by daemon/services.ts). */
    maintenance: MaintenanceCache;
  }
}

/** What the cache uses of the daemon. */
export interface MaintenanceDeps {
  db: Kysely<Database>;
  bus: Bus;
  log: Logger;
}

const ids = (text: string): number[] => {
  try {
    const list = JSON.parse(text);
    return Array.isArray(list) ? list.filter((n): n is number => Number.isSafeInteger(n)) : [];
  } catch {
    return [];
  }
};

function weekdays(text: string | null): Weekday[] {
  try {
    const list = JSON.parse(text ?? '[]');
    return Array.isArray(list) ? list.filter((d): d is Weekday => (WEEKDAYS as readonly unknown[]).includes(d)) : [];
  } catch {
    return [];
  }
}

/** The schedule of a stored window. */
export function scheduleOf(row: WindowRow): WindowSchedule {
  if (row.kind === 'WEEKLY') {
    return {
      kind: 'WEEKLY',
      days: weekdays(row.days),
      startTime: row.start_time ?? '00:00',
      durationMinutes: Number(row.duration_minutes ?? 0),
      timeZone: row.time_zone ?? 'UTC',
    };
  }
  return { kind: 'ONE_OFF', startsAt: Number(row.starts_at), endsAt: Number(row.ends_at) };
}

/**
 * Every maintenance window in memory, so that the incident engine asks "is
 * this resource in maintenance?" without a query per batch. Reloaded when a
 * window changes here, when a resource changes (its groups may have), and every
 * minute. Groups are expanded to their resources at load time. One per
 * daemon (`ctx.maintenance`): daemon/services.ts builds it, reads it once and
 * starts it before the modules, and stops it after them.
 */
export class MaintenanceCache {
  readonly #ctx: MaintenanceDeps;
  #windows: CachedWindow[] = [];
  #loaded: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  readonly #reload = new CoalescedReload(async () => {
    this.#windows = await this.#read();
  });
  readonly #onResource = () => {
    if (this.#windows.some((w) => w.groupIds.length > 0)) void this.reload().catch(() => undefined);
  };

  constructor(ctx: MaintenanceDeps) {
    this.#ctx = ctx;
  }

  /**
   * Resolves once the windows were read at least once. Inside a transaction,
   * pass it: on SQLite the daemon's one connection is the transaction's, and a
   * read through `ctx.db` would wait for it forever.
   */
  ready(trx?: Transaction<Database>): Promise<void> {
    if (this.#loaded) return this.#loaded;
    if (!trx) return this.reload();
    return (this.#loaded = this.#read(trx).then((windows) => {
      this.#windows = windows;
    }));
  }

  reload(): Promise<void> {
    const run = this.#reload.run();
    this.#loaded ??= run;
    return run;
  }

  /** Starts the periodic reload and follows resource changes on the bus. */
  start(): void {
    this.#ctx.bus.on('resource.changed', this.#onResource);
    this.#timer = setInterval(() => {
      this.reload().catch((err) => this.#ctx.log.warn({ err }, 'maintenance windows reload failed'));
    }, RELOAD_EVERY_MS);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#ctx.bus.off('resource.changed', this.#onResource);
  }

  get windows(): readonly CachedWindow[] {
    return this.#windows;
  }

  /** The windows covering a resource (directly or through a group) that are open at `at`. */
  resourceWindows(resourceId: number, at = Date.now()): CachedWindow[] {
    return this.#windows.filter((w) => w.covers.has(resourceId) && isActive(w.schedule, at));
  }

  resourceInMaintenance(resourceId: number, at = Date.now()): boolean {
    return this.#windows.some((w) => w.covers.has(resourceId) && isActive(w.schedule, at));
  }

  agentInMaintenance(agentId: number, at = Date.now()): boolean {
    return this.#windows.some((w) => w.agentIds.includes(agentId) && isActive(w.schedule, at));
  }

  /**
   * For the status page: windows touching any of these resources or groups
   * that are open now or start within `horizonMs`, with that occurrence.
   */
  activeAndUpcoming(
    targets: { resourceIds?: number[]; groupIds?: number[] },
    at = Date.now(),
    horizonMs = 7 * 86_400_000,
  ): Array<{ window: CachedWindow; occurrence: Occurrence; active: boolean }> {
    const resources = new Set(targets.resourceIds ?? []);
    const groups = new Set(targets.groupIds ?? []);
    const out: Array<{ window: CachedWindow; occurrence: Occurrence; active: boolean }> = [];
    for (const w of this.#windows) {
      const touches = w.groupIds.some((g) => groups.has(g)) || [...resources].some((r) => w.covers.has(r));
      if (!touches) continue;
      const occurrence = currentOrNext(w.schedule, at);
      if (!occurrence || occurrence.start > at + horizonMs) continue;
      out.push({ window: w, occurrence, active: occurrence.start <= at });
    }
    return out.sort((a, b) => a.occurrence.start - b.occurrence.start);
  }

  async #read(db: Kysely<Database> | Transaction<Database> = this.#ctx.db): Promise<CachedWindow[]> {
    const rows = await db.selectFrom('maintenance_windows').selectAll().orderBy('id').execute();
    const windows = rows.map((row) => ({
      id: Number(row.id),
      name: row.name,
      schedule: scheduleOf(row),
      resourceIds: ids(row.resource_ids),
      groupIds: ids(row.group_ids),
      agentIds: ids(row.agent_ids),
      covers: new Set<number>(),
    }));
    const groupIds = [...new Set(windows.flatMap((w) => w.groupIds))];
    const members = new Map<number, number[]>();
    if (groupIds.length > 0) {
      const links = await db.selectFrom('resource_groups').select(['resource_id', 'group_id']).where('group_id', 'in', groupIds).execute();
      for (const link of links) {
        const list = members.get(Number(link.group_id)) ?? [];
        list.push(Number(link.resource_id));
        members.set(Number(link.group_id), list);
      }
    }
    for (const w of windows) {
      for (const id of w.resourceIds) w.covers.add(id);
      for (const g of w.groupIds) for (const id of members.get(g) ?? []) w.covers.add(id);
    }
    return windows;
  }
}

/**
 * For the status page: the maintenance windows touching these resources or
 * groups (a window on a group, or on a resource listed or in one of its
 * groups) that are open now or start within `horizonMs` (default a week),
 * with that opening, soonest first. From memory; reads the windows once if
 * this daemon has not yet.
 */
export async function maintenanceFor(
  cache: MaintenanceCache,
  targets: { resourceIds?: number[]; groupIds?: number[] },
  at = Date.now(),
  horizonMs?: number,
): Promise<Array<{ window: CachedWindow; occurrence: Occurrence; active: boolean }>> {
  await cache.ready();
  return cache.activeAndUpcoming(targets, at, horizonMs);
}
