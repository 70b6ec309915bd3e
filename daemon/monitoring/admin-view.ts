import type { Static } from '@sinclair/typebox';
import type { AdminResource } from '../../src/api/schemas/monitoring.ts';
import type { DaemonContext } from '../context.ts';
import type { ResourceRow } from '../store/schema.ts';
import { maintenanceOf } from '../alerts/incidents/resource-view.ts';
import { locationsOf } from '../probes/resource-locations.ts';
import { pushViewsOf } from '../push/store/push-view.ts';
import { toAdminResource } from './mappers.ts';
import { groupsOf } from './resource-store.ts';
import { dependenciesOf } from './dependencies.ts';

/**
 * The admin views of `rows` (every resource when `all`, else a page or one): their groups,
 * locations, dependencies, maintenance and push checks, each read once for the page, never once
 * per row; for every resource without `IN` lists.
 */
export async function adminViews(ctx: DaemonContext, rows: ResourceRow[], all = false): Promise<Array<Static<typeof AdminResource>>> {
  const ids = all ? undefined : rows.map((r) => r.id);
  const groups = await groupsOf(ctx.db, ids);
  const locations = await locationsOf(ctx.db, ids);
  const dependsOn = await dependenciesOf(ctx.db, ids);
  const maintenance = await maintenanceOf(ctx);
  const groupIds = (id: number) => (groups.get(id) ?? []).map((g) => g.id);
  const push = await pushViewsOf(ctx.db, ctx.config.publicUrl, rows, groupIds);
  return rows.map((row) =>
    toAdminResource(
      row,
      groups.get(row.id) ?? [],
      maintenance(row.id),
      locations.get(row.id),
      push.get(row.id) ?? null,
      dependsOn.get(row.id),
    ),
  );
}
