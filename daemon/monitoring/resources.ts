import type { resourceOperations } from '../../src/api/ops/resources.ts';
import { notFound } from '../../src/errors.ts';
import { toAdminResource, toDetail, toListItem, toResource } from './mappers.ts';
import { locationResults, locationsOf, locationsOfOne, resolveLocations, setLocations } from '../probes/resource-locations.ts';
import { checkGroupIds, checkNameFree, checkResourceBody, groupsOf, setGroups } from './resource-store.ts';
import { conditionsColumn } from '../probes/resource-conditions.ts';
import { requestBox, toColumns } from '../probes/http-request-store.ts';
import { uniqueViolation } from '../store/unique-violation.ts';
import { updateResource } from './resource-update.ts';
import type { HandlersOf } from '../http/bind.ts';
import type { MonitoringState } from './state.ts';
import { visibleTo } from './visibility.ts';
import { audience, detailKey, listKey } from './read-cache.ts';
import { checkResource, getResourceHistory } from './history.ts';
import { monitoringEvents } from './events.ts';
import { testResourceHandler } from './resource-test.ts';
import { publishIncidents } from '../alerts/incidents/events.ts';
import { maintenanceOf, recentIncidents } from '../alerts/incidents/resource-view.ts';
import { stopWatching } from '../alerts/incidents/lifecycle.ts';

type Ops = typeof resourceOperations;

/** Handlers of `/api/resources/**`, `/admin/api/resources/**` and `/api/events`. */
export function resourceHandlers(state: MonitoringState): HandlersOf<Ops> {
  return {
    listResources({ ctx, principal }) {
      return state.reads.read(listKey(audience(principal)), async () => {
        const rows = await ctx.db
          .selectFrom('resources')
          .selectAll()
          .where('active', '=', 1)
          .where(visibleTo(principal))
          .orderBy('id')
          .execute();
        return rows.map(toListItem);
      });
    },

    getResource({ ctx, principal, params }) {
      return state.reads.read(detailKey(params.id, audience(principal)), async () => {
        const row = await ctx.db
          .selectFrom('resources')
          .selectAll()
          .where('id', '=', params.id)
          .where(visibleTo(principal))
          .executeTakeFirst();
        if (!row) throw notFound(`Resource ${params.id} does not exist`);
        return toDetail(row, (await groupsOf(ctx.db, [row.id])).get(row.id) ?? []);
      });
    },

    async listAdminResources({ ctx }) {
      const rows = await ctx.db.selectFrom('resources').selectAll().orderBy('id').execute();
      const groups = await groupsOf(ctx.db);
      const locations = await locationsOf(ctx.db);
      const maintenance = await maintenanceOf(ctx);
      return rows.map((row) => toAdminResource(row, groups.get(row.id) ?? [], maintenance(row.id), locations.get(row.id)));
    },

    async getAdminResource({ ctx, params }) {
      const row = await ctx.db.selectFrom('resources').selectAll().where('id', '=', params.id).executeTakeFirst();
      if (!row) throw notFound(`Resource ${params.id} does not exist`);
      const maintenance = await maintenanceOf(ctx);
      const locations = await locationsOfOne(ctx.db, row.id);
      const admin = toAdminResource(row, (await groupsOf(ctx.db, [row.id])).get(row.id) ?? [], maintenance(row.id), locations);
      return { ...admin, incidents: await recentIncidents(ctx.db, row.id), locationResults: await locationResults(ctx.db, row, locations) };
    },

    async createResource({ ctx, body }) {
      const recursive = body.recursive ?? false;
      checkResourceBody(body);
      const active = body.active ?? true;
      const now = Date.now();
      const row = await ctx.db
        .transaction()
        .execute(async (trx) => {
          const groupIds = await checkGroupIds(trx, body.groupIds ?? []);
          const locations = body.locations === undefined ? undefined : await resolveLocations(trx, body.locations);
          await checkNameFree(trx, body.name);
          const created = await trx
            .insertInto('resources')
            .values({
              name: body.name,
              resource_type: body.resourceType,
              target: body.target ?? '',
              skip_tls: body.skipTLS ? 1 : 0,
              recursive: recursive ? 1 : 0,
              active: active ? 1 : 0,
              interval_seconds: body.intervalSeconds ?? 60,
              created_at: now,
              updated_at: now,
              failure_threshold: body.failureThreshold ?? 3,
              success_threshold: body.successThreshold ?? 1,
              quorum: body.quorum ?? 'majority',
              conditions: conditionsColumn(body.conditions ?? []),
              ...toColumns(body, requestBox(ctx)),
              // A new active resource is due at once; the scheduler hears about it on the bus.
              next_run_at: active ? now : null,
              current_status: 'unknown',
              latest_check_status: null,
              latest_checked_at: null,
              latest_message: null,
              latest_error_code: null,
              latest_duration_ms: null,
            })
            .returningAll()
            .executeTakeFirstOrThrow();
          await setGroups(trx, created.id, groupIds);
          if (locations) await setLocations(trx, created.id, locations);
          return created;
        })
        .catch((err: unknown) => {
          throw uniqueViolation(err, 'name') ?? err;
        });
      await state.visibility.refresh(row.id);
      ctx.bus.emit('resource.changed', { id: row.id });
      return toResource(row);
    },

    updateResource: (rc) => updateResource(state, rc),

    async deleteResource({ ctx, params }) {
      const found = await ctx.db.transaction().execute(async (trx) => {
        const row = await trx.selectFrom('resources').select('id').where('id', '=', params.id).executeTakeFirst();
        if (!row) return false;
        const incidents = await stopWatching(trx, params.id, 'deleted');
        // Explicit rather than relying on ON DELETE CASCADE alone: large histories go in one statement.
        await trx.deleteFrom('check_history').where('resource_id', '=', params.id).execute();
        await trx.deleteFrom('resource_groups').where('resource_id', '=', params.id).execute();
        await trx.deleteFrom('resource_locations').where('resource_id', '=', params.id).execute();
        await trx.deleteFrom('location_results').where('resource_id', '=', params.id).execute();
        await trx.deleteFrom('resources').where('id', '=', params.id).execute();
        return incidents;
      });
      if (!found) throw notFound(`Resource ${params.id} does not exist`);
      publishIncidents(ctx, found); // while the visibility cache still knows the resource
      state.visibility.forget(params.id);
      ctx.bus.emit('resource.deleted', { id: params.id });
      return { status: 'deleted' as const };
    },

    checkResource,
    testResource: testResourceHandler(),
    getResourceHistory,
    monitoringEvents: (rc) => monitoringEvents(state, rc),
  };
}
