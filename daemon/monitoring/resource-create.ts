import type { Insertable, Transaction } from 'kysely';
import type { Static } from '@sinclair/typebox';
import type { ResourceCreate } from '../../src/api/schemas/monitoring.ts';
import type { DaemonContext } from '../context.ts';
import type { Database, ResourceRow, ResourcesTable } from '../store/schema.ts';
import { requestBox, toColumns } from '../probes/http-request-store.ts';
import { conditionsColumn } from '../probes/resource-conditions.ts';
import { resolveLocations, setLocations } from '../probes/resource-locations.ts';
import { insertPushCheck } from '../push/store/push-checks.ts';
import { createSchedule } from '../push/store/push-fields.ts';
import { checkSlugFree, freeSlug, slugFromName } from '../push/store/slugs.ts';
import { checkGroupIds, checkNameFree, setGroups } from './resource-store.ts';
import { createOptions } from './check-option-rules.ts';
import { resolveDependencies, setDependencies } from './dependencies.ts';

/**
 * Writes a new resource in `trx`, its body already checked by checkResourceBody: its groups,
 * locations, dependencies and, for PUSH, its push check (a given slug that another push check has is a 409
 * naming `target`; an absent one is made from the name, `-2`, `-3`… on a clash). The create
 * API and the pings' `?create=1` both come through here.
 */
export async function insertResource(
  ctx: Pick<DaemonContext, 'installSecret' | 'clock'>,
  trx: Transaction<Database>,
  body: Static<typeof ResourceCreate>,
): Promise<ResourceRow> {
  const push = body.resourceType === 'PUSH';
  const now = Date.now();
  const groupIds = await checkGroupIds(trx, body.groupIds ?? []);
  const locations = body.locations === undefined ? undefined : await resolveLocations(trx, body.locations);
  await checkNameFree(trx, body.name);
  const dependsOn = await resolveDependencies(trx, body.dependsOn ?? [], { name: body.name });
  let target = body.target ?? '';
  if (push) {
    if (body.target === undefined) target = await freeSlug(trx, slugFromName(body.name));
    else await checkSlugFree(trx, body.target);
  }
  const created = await trx
    .insertInto('resources')
    .values(resourceValues(ctx, body, target, now))
    .returningAll()
    .executeTakeFirstOrThrow();
  await setGroups(trx, created.id, groupIds);
  if (locations) await setLocations(trx, created.id, locations);
  await setDependencies(trx, created.id, dependsOn);
  if (push) {
    // Deadlines run on the daemon's clock (a test daemon moves it), the row's created_at on the wall's.
    const at = ctx.clock.now();
    await insertPushCheck(trx, created.id, target, createSchedule(body, at), at);
  }
  return created;
}

/** The row of a new resource, its body checked: what every create writes (the single call and a batch's). */
export function resourceValues(
  ctx: Pick<DaemonContext, 'installSecret'>,
  body: Static<typeof ResourceCreate>,
  target: string,
  now: number,
): Insertable<ResourcesTable> {
  const push = body.resourceType === 'PUSH';
  const active = body.active ?? true;
  return {
    name: body.name,
    resource_type: body.resourceType,
    target,
    skip_tls: body.skipTLS ? 1 : 0,
    recursive: body.recursive ? 1 : 0,
    active: active ? 1 : 0,
    interval_seconds: body.intervalSeconds ?? 60,
    created_at: now,
    updated_at: now,
    // A push check misses a deadline once and then waits for a ping: a streak of 3 would never come.
    failure_threshold: body.failureThreshold ?? (push ? 1 : 3),
    success_threshold: body.successThreshold ?? 1,
    quorum: body.quorum ?? 'majority',
    conditions: conditionsColumn(body.conditions ?? []),
    severity: body.severity ?? 'critical',
    ...toColumns(body, requestBox(ctx)),
    check_options: createOptions(body.resourceType, body),
    // A new active resource is due at once; the scheduler hears about it on the bus. PUSH is never probed.
    next_run_at: active && !push ? now : null,
    current_status: 'unknown',
    latest_check_status: null,
    latest_checked_at: null,
    latest_message: null,
    latest_error_code: null,
    latest_duration_ms: null,
  };
}
