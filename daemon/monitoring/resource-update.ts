import type { resourceOperations } from '../../src/api/ops/resources.ts';
import { MONITORING_CHANNEL, type ResourceType, STATUS_CHANGED, type StatusChanged } from '../../src/api/schemas/monitoring.ts';
import { invalidField, notFound } from '../../src/errors.ts';
import { formatDateTime } from '../../src/time.ts';
import type { RequestContext } from '../http/bind.ts';
import type { Transaction } from 'kysely';
import type { Database, ResourceRow, ResourceUpdate } from '../store/schema.ts';
import type { DaemonContext } from '../context.ts';
import { fieldsOf, openSecrets, requestBox } from '../probes/http-request-store.ts';
import { checkRequestFields } from './http-check-rules.ts';
import { checkUnopenedPatch, mergeRequest, type RequestPatch, requestChanges, touchesRequest } from './http-check-patch.ts';
import { publishIncidents } from '../alerts/incidents/events.ts';
import { stopWatching } from '../alerts/incidents/lifecycle.ts';
import type { GroupRef } from './mappers.ts';
import { adminViews } from './admin-view.ts';
import { checkConditions, checkGroupIds, checkNameFree, checkResourceShape, groupsOf, setGroups } from './resource-store.ts';
import { conditionsColumn, conditionsOf } from '../probes/resource-conditions.ts';
import { uniqueViolation } from '../store/unique-violation.ts';
import { locationsOfOne, resolveLocations, sameLocations, setLocations } from '../probes/resource-locations.ts';
import { effectiveStatus } from '../probes/results.ts';
import type { MonitoringState } from './state.ts';
import { checkTypeFields } from '../push/store/push-fields.ts';
import { patchOptions } from './check-option-rules.ts';
import { patchPushCheck } from '../push/store/push-checks.ts';
import { dependenciesOf, resolveDependencies, sameDependencies, setDependencies } from './dependencies.ts';

/**
 * `PATCH /api/resources/{id}`: any subset of the fields. A change of what is
 * probed (type, target, skipTLS, recursive) or of where (locations) makes
 * `currentStatus` unknown until the next check, and any change but `severity` reschedules
 * the resource at once. A PUSH resource's slug (`target`) and schedule live in push_checks
 * (daemon/push/store/); a new schedule moves its deadline.
 */
export async function updateResource(
  state: MonitoringState,
  { ctx, params, body }: RequestContext<typeof resourceOperations.updateResource>,
) {
  const now = Date.now();
  const updated = await ctx.db
    .transaction()
    .execute((trx) => patchResource(ctx, trx, params.id, body, now))
    .catch((err: unknown) => {
      throw uniqueViolation(err, 'name') ?? err;
    });
  if (updated.changed && body.groupIds !== undefined) await state.visibility.refresh(updated.row.id);
  announceUpdate(ctx, updated, now);
  return adminView(ctx, updated.row);
}

export interface Patched {
  row: ResourceRow;
  before: ResourceRow;
  incidents: Incidents;
  changed: boolean;
}
type Incidents = Awaited<ReturnType<typeof stopWatching>>;
type Patch = RequestContext<typeof resourceOperations.updateResource>['body'];

/**
 * Applies a PATCH body to resource `id` in `trx` (404 when it does not exist, 400/409 naming the
 * field): the single call and a batch's updates both come through here.
 */
export async function patchResource(
  ctx: DaemonContext,
  trx: Transaction<Database>,
  id: number,
  body: Patch,
  now: number,
): Promise<Patched> {
  const before = await trx.selectFrom('resources').selectAll().where('id', '=', id).executeTakeFirst();
  if (!before) throw notFound(`Resource ${id} does not exist`);
  const push = before.resource_type === 'PUSH';
  // A push check and a probed resource share nothing of what they watch (uuid, schedule; request, locations).
  if (body.resourceType !== undefined && (body.resourceType === 'PUSH') !== push)
    throw invalidField('resourceType', `a ${before.resource_type} resource cannot become ${body.resourceType}: create a new resource`);
  checkTypeFields(push, body);
  const type = (body.resourceType ?? before.resource_type) as ResourceType;
  const target = body.target ?? before.target;
  const recursive = body.recursive ?? before.recursive === 1;
  const options = patchOptions(type, before, body);
  // A push check's target is its slug: renaming it changes nothing that was watched.
  const probed =
    !push &&
    ((body.resourceType !== undefined && body.resourceType !== before.resource_type) ||
      options !== before.check_options ||
      (body.target !== undefined && body.target !== before.target) ||
      (body.skipTLS !== undefined && body.skipTLS !== (before.skip_tls === 1)) ||
      (body.recursive !== undefined && body.recursive !== (before.recursive === 1)));
  if (!push && (body.resourceType !== undefined || body.target !== undefined || body.recursive !== undefined)) {
    checkResourceShape(type, target, recursive);
  }
  // A new type must answer the placeholders of the conditions it keeps.
  if (body.conditions !== undefined || body.resourceType !== undefined)
    checkConditions(type, body.conditions ?? conditionsOf(before.conditions));
  const request = mergedRequest(ctx, before, body, type);
  const groupIds = body.groupIds === undefined ? undefined : await checkGroupIds(trx, body.groupIds);
  const locations = body.locations === undefined ? undefined : await resolveLocations(trx, body.locations);
  const moved = locations !== undefined && !sameLocations(locations, await locationsOfOne(trx, id));
  const regrouped = groupIds !== undefined && !sameIds(groupIds, (await groupsOf(trx, [id])).get(id) ?? []);
  if (body.name !== undefined && body.name !== before.name) await checkNameFree(trx, body.name, before.id);
  const dependsOn =
    body.dependsOn === undefined ? undefined : await resolveDependencies(trx, body.dependsOn, { id: id, name: body.name ?? before.name });
  // Dependencies change how alerts route, not what is checked: stored here, no reschedule.
  if (dependsOn && !sameDependencies(dependsOn, (await dependenciesOf(trx, [id])).get(id) ?? [])) await setDependencies(trx, id, dependsOn);
  const rescheduled = push && (await patchPushCheck(trx, id, body, ctx.clock.now(), before.created_at));

  // Only what differs is set: a PATCH equal to the stored resource (apply sends everything on every run) changes nothing.
  const set: ResourceUpdate = { ...request.changes };
  const put = <K extends keyof ResourceUpdate>(key: K, value: ResourceUpdate[K] | undefined, stored: unknown) => {
    if (value !== undefined && value !== stored) set[key] = value;
  };
  put('name', body.name, before.name);
  put('resource_type', body.resourceType, before.resource_type);
  put('target', body.target, before.target);
  put('skip_tls', bit(body.skipTLS), before.skip_tls);
  put('recursive', bit(body.recursive), before.recursive);
  put('interval_seconds', body.intervalSeconds, before.interval_seconds);
  put('active', bit(body.active), before.active);
  put('failure_threshold', body.failureThreshold, Number(before.failure_threshold));
  put('success_threshold', body.successThreshold, Number(before.success_threshold));
  put('quorum', body.quorum, before.quorum);
  put('severity', body.severity, before.severity);
  put('check_options', options, before.check_options);
  if (body.conditions !== undefined) put('conditions', conditionsColumn(body.conditions), before.conditions);
  const changed = Object.keys(set).length > 0 || moved || regrouped || rescheduled;
  if (!changed) return { row: before, before, incidents: [], changed };

  const active = body.active ?? before.active === 1;
  // Severity changes how alerts route, not what is checked: alone, it does not reschedule.
  const routingOnly = Object.keys(set).every((k) => k === 'severity') && !moved && !regrouped && !rescheduled;
  set.updated_at = now;
  if (!routingOnly) set.next_run_at = active && !push ? now : null;
  // The latest result was about the old target (or was decided by other locations): unknown until the next check.
  if (probed || moved) set.current_status = 'unknown';
  if (probed) {
    // A new target has its own certificate: CERT_EXPIRING starts again for it.
    set.cert_expires_at = null;
    set.cert_alerted_days = null;
  }
  const incidents = before.active === 1 && !active ? await stopWatching(trx, id, 'deactivated', now) : [];
  const row = await trx.updateTable('resources').set(set).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
  if (regrouped) await setGroups(trx, id, groupIds);
  if (moved) await setLocations(trx, id, locations);
  return { row, before, incidents, changed };
}

/**
 * After the commit: the incidents a deactivation closed, the bus (scheduler, caches, other pods)
 * and STATUS_CHANGED when the effective status moved. The caller refreshes visibility when groups were given.
 */
export function announceUpdate(ctx: DaemonContext, { row, before, incidents, changed }: Patched, now: number): void {
  if (!changed) return;
  publishIncidents(ctx, incidents);
  ctx.bus.emit('resource.changed', { id: row.id });
  const from = effectiveStatus(before.active, before.current_status);
  const to = effectiveStatus(row.active, row.current_status);
  if (from !== to) {
    const change: StatusChanged = { resourceId: row.id, name: row.name, from, to, at: formatDateTime(now) };
    ctx.events.channel(MONITORING_CHANNEL).publish(STATUS_CHANGED, change);
  }
}

async function adminView(ctx: DaemonContext, row: ResourceRow) {
  return (await adminViews(ctx, [row]))[0];
}

const bit = (b: boolean | undefined) => (b === undefined ? undefined : b ? 1 : 0);
const sameIds = (ids: number[], groups: GroupRef[]) =>
  ids.length === groups.length && [...ids].sort((a, b) => a - b).every((id, i) => id === groups[i].id);

/**
 * The request fields once the PATCH is applied, checked against the type (a type that cannot
 * take the HTTP fields set is a 400 naming them), and the columns that change.
 */
function mergedRequest(ctx: Pick<DaemonContext, 'installSecret'>, before: ResourceRow, body: RequestPatch, type: ResourceType) {
  const box = requestBox(ctx);
  const opened = openSecrets(box, before.http_secrets);
  const touched = touchesRequest(body);
  if (touched && opened === undefined) checkUnopenedPatch(before.http_request, body);
  const stored = fieldsOf(before, opened ?? {});
  const fields = touched ? mergeRequest(stored, body) : stored;
  if (touched || type !== before.resource_type) checkRequestFields(type, fields);
  return { touched, fields, changes: touched ? requestChanges(before, fields, opened, body, box) : {} };
}
