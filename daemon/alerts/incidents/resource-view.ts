import { type Kysely, sql } from 'kysely';
import type { Incident } from '../../../src/api/schemas/incidents.ts';
import type { DaemonContext } from '../../context.ts';
import type { Database } from '../../store/schema.ts';
import { toIncident } from './mappers.ts';

/** Incidents shown on the admin resource detail. */
export const RECENT_INCIDENTS = 5;

/** The most recent incidents of a resource, the open one first. */
export async function recentIncidents(db: Kysely<Database>, resourceId: number, limit = RECENT_INCIDENTS): Promise<Incident[]> {
  const rows = await db
    .selectFrom('incidents')
    .selectAll()
    .where('resource_id', '=', resourceId)
    .orderBy(sql`CASE WHEN resolved_at IS NULL THEN 0 ELSE 1 END`)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  const now = Date.now();
  return rows.map((row) => toIncident(row, now));
}

/** `inMaintenance` for resource views, from the in-memory windows (no query per resource). */
export async function maintenanceOf(ctx: DaemonContext): Promise<(resourceId: number) => boolean> {
  const cache = ctx.maintenance;
  await cache.ready();
  const now = Date.now();
  return (id) => cache.resourceInMaintenance(id, now);
}
