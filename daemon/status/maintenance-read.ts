import { type CachedWindow, maintenanceFor } from '../alerts/maintenance/cache.ts';
import { isActive } from '../alerts/maintenance/schedule.ts';
import type { DaemonContext } from '../context.ts';

/**
 * Maintenance windows as a status page shows them, from the alerts
 * capability's in-memory windows (groups expanded to their
 * resources, one-off or weekly in an IANA zone, DST-correct; reloaded on every
 * change through its API, and every minute for other pods): per window, the
 * opening in progress or else the next one within the horizon, with the
 * given resources it covers.
 */
export interface WindowOccurrence {
  id: number;
  name: string;
  startsAt: number;
  endsAt: number;
  /** The resources of the page it covers (directly or through a group). */
  resourceIds: number[];
}

export async function pageMaintenance(
  ctx: DaemonContext,
  resourceIds: number[],
  now: number,
  horizonMs: number,
): Promise<WindowOccurrence[]> {
  return (await maintenanceFor(ctx.maintenance, { resourceIds }, now, horizonMs)).map(({ window, occurrence }) => ({
    id: window.id,
    name: window.name,
    startsAt: occurrence.start,
    endsAt: occurrence.end,
    resourceIds: resourceIds.filter((id) => window.covers.has(id)),
  }));
}

/** Whether a window covering the resource is open now (the `inMaintenance` of the admin resource). */
export function inMaintenance(ctx: DaemonContext, resourceId: number, now = Date.now()): boolean {
  return ctx.maintenance.resourceInMaintenance(resourceId, now);
}

/**
 * The test `inMaintenance` makes, for many resources at once: the open windows
 * are found once (a weekly schedule costs a few Intl calls), then each
 * resource is a set lookup per open window.
 */
export function maintenanceTest(ctx: DaemonContext, now = Date.now()): (resourceId: number) => boolean {
  const open: CachedWindow[] = ctx.maintenance.windows.filter((w) => isActive(w.schedule, now));
  return (resourceId) => open.some((w) => w.covers.has(resourceId));
}
