import type { resourceOperations } from '../../src/api/ops/resources.ts';
import { MONITORING_CHANNEL, type ResourceType, STATUS_CHANGED, type StatusChanged } from '../../src/api/schemas/monitoring.ts';
import { notFound } from '../../src/errors.ts';
import { formatDateTime } from '../../src/time.ts';
import type { RequestContext } from '../http/bind.ts';
import type { ResourceUpdate } from '../store/schema.ts';
import { publishIncidents } from '../alerts/incidents/events.ts';
import { stopWatching } from '../alerts/incidents/lifecycle.ts';
import { maintenanceOf } from '../alerts/incidents/resource-view.ts';
import { toAdminResource } from './mappers.ts';
import { checkConditions, checkGroupIds, checkNameFree, checkResourceShape, groupsOf, setGroups } from './resource-store.ts';
import { conditionsColumn, conditionsOf } from '../probes/resource-conditions.ts';
import { uniqueViolation } from '../store/unique-violation.ts';
import { locationsOfOne, resolveLocations, sameLocations, setLocations } from '../probes/resource-locations.ts';
import { effectiveStatus } from '../probes/results.ts';
import type { MonitoringState } from './state.ts';

/**
 * `PATCH /api/resources/{id}`: any subset of the fields. A change of what is
 * probed (type, target, skipTLS, recursive) or of where (locations) makes
 * `currentStatus` unknown until the next check, and any change reschedules
 * the resource at once.
 */
export async function updateResource(
  state: MonitoringState,
  { ctx, params, body }: RequestContext<typeof resourceOperations.updateResource>,
) {
  const now = Date.now();
  const { row, before, incidents } = await ctx.db
    .transaction()
    .execute(async (trx) => {
      const before = await trx.selectFrom('resources').selectAll().where('id', '=', params.id).executeTakeFirst();
      if (!before) throw notFound(`Resource ${params.id} does not exist`);
      const type = (body.resourceType ?? before.resource_type) as ResourceType;
      const target = body.target ?? before.target;
      const recursive = body.recursive ?? before.recursive === 1;
      const probed =
        (body.resourceType !== undefined && body.resourceType !== before.resource_type) ||
        (body.target !== undefined && body.target !== before.target) ||
        (body.skipTLS !== undefined && body.skipTLS !== (before.skip_tls === 1)) ||
        (body.recursive !== undefined && body.recursive !== (before.recursive === 1));
      if (body.resourceType !== undefined || body.target !== undefined || body.recursive !== undefined) {
        checkResourceShape(type, target, recursive);
      }
      // A new type must answer the placeholders of the conditions it keeps.
      if (body.conditions !== undefined || body.resourceType !== undefined)
        checkConditions(type, body.conditions ?? conditionsOf(before.conditions));
      const groupIds = body.groupIds === undefined ? undefined : await checkGroupIds(trx, body.groupIds);
      const locations = body.locations === undefined ? undefined : await resolveLocations(trx, body.locations);
      const moved = locations !== undefined && !sameLocations(locations, await locationsOfOne(trx, params.id));
      if (body.name !== undefined && body.name !== before.name) await checkNameFree(trx, body.name, before.id);

      const active = body.active ?? before.active === 1;
      const set: ResourceUpdate = { updated_at: now, next_run_at: active ? now : null };
      if (body.name !== undefined) set.name = body.name;
      if (body.resourceType !== undefined) set.resource_type = body.resourceType;
      if (body.target !== undefined) set.target = body.target;
      if (body.skipTLS !== undefined) set.skip_tls = body.skipTLS ? 1 : 0;
      if (body.recursive !== undefined) set.recursive = body.recursive ? 1 : 0;
      if (body.intervalSeconds !== undefined) set.interval_seconds = body.intervalSeconds;
      if (body.active !== undefined) set.active = body.active ? 1 : 0;
      if (body.failureThreshold !== undefined) set.failure_threshold = body.failureThreshold;
      if (body.successThreshold !== undefined) set.success_threshold = body.successThreshold;
      if (body.quorum !== undefined) set.quorum = body.quorum;
      if (body.conditions !== undefined) set.conditions = conditionsColumn(body.conditions);
      // The latest result was about the old target (or was decided by other locations): unknown until the next check.
      if (probed || moved) set.current_status = 'unknown';
      if (probed) {
        // A new target has its own certificate: CERT_EXPIRING starts again for it.
        set.cert_expires_at = null;
        set.cert_alerted_days = null;
      }
      const incidents = before.active === 1 && !active ? await stopWatching(trx, params.id, 'deactivated', now) : [];
      const row = await trx.updateTable('resources').set(set).where('id', '=', params.id).returningAll().executeTakeFirstOrThrow();
      if (groupIds !== undefined) await setGroups(trx, params.id, groupIds);
      if (locations !== undefined) await setLocations(trx, params.id, locations);
      return { row, before, incidents };
    })
    .catch((err: unknown) => {
      throw uniqueViolation(err, 'name') ?? err;
    });

  if (body.groupIds !== undefined) await state.visibility.refresh(row.id);
  publishIncidents(ctx, incidents);
  ctx.bus.emit('resource.changed', { id: row.id });
  const from = effectiveStatus(before.active, before.current_status);
  const to = effectiveStatus(row.active, row.current_status);
  if (from !== to) {
    const change: StatusChanged = { resourceId: row.id, name: row.name, from, to, at: formatDateTime(now) };
    ctx.events.channel(MONITORING_CHANNEL).publish(STATUS_CHANGED, change);
  }
  const maintenance = await maintenanceOf(ctx);
  return toAdminResource(
    row,
    (await groupsOf(ctx.db, [row.id])).get(row.id) ?? [],
    maintenance(row.id),
    await locationsOfOne(ctx.db, row.id),
  );
}
