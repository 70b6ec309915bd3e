import type { resourceOperations } from '../../src/api/ops/resources.ts';
import { notFound } from '../../src/errors.ts';
import { toDetail, toListItem, toResource } from './mappers.ts';
import { adminViews } from './admin-view.ts';
import { locationResults, locationsOfOne } from '../probes/resource-locations.ts';
import { checkResourceBody, groupsOf } from './resource-store.ts';
import { insertResource } from './resource-create.ts';
import { uniqueViolation } from '../store/unique-violation.ts';
import { updateResource } from './resource-update.ts';
import { batchResources } from './resource-batch.ts';
import type { HandlersOf } from '../http/bind.ts';
import type { ResourceRow } from '../store/schema.ts';
import { LIST_CHUNK, listPage, LongList, type ReadPage, streamList, wholeList } from './resource-list.ts';
import type { MonitoringState } from './state.ts';
import { visibleTo } from './visibility.ts';
import { audience, detailKey, listKey } from './read-cache.ts';
import { checkResource, getResourceHistory } from './history.ts';
import { monitoringEvents } from './events.ts';
import { testResourceHandler } from './resource-test.ts';
import { publishIncidents } from '../alerts/incidents/events.ts';
import { recentIncidents } from '../alerts/incidents/resource-view.ts';
import { deleteResourceRows } from './resource-delete.ts';

type Ops = typeof resourceOperations;

/** Handlers of `/api/resources/**`, `/admin/api/resources/**` and `/api/events`. */
export function resourceHandlers(state: MonitoringState): HandlersOf<Ops> {
  return {
    async listResources({ ctx, principal, query, res }) {
      const read: ReadPage = (after, limit) =>
        ctx.db
          .selectFrom('resources')
          .selectAll()
          .where('active', '=', 1)
          .where(visibleTo(principal))
          .where('id', '>', after)
          .orderBy('id')
          .limit(limit)
          .execute();
      const render = (rows: ResourceRow[]) => rows.map(toListItem);
      if (query.limit !== undefined) return listPage(res, '/api/resources', { ...query, limit: query.limit }, read, render);
      if (query.after !== undefined) return wholeList(res, query.after, read, render);
      try {
        return await state.reads.read(listKey(audience(principal)), async () => {
          const rows = await read(0, LIST_CHUNK + 1);
          if (rows.length > LIST_CHUNK) throw new LongList(rows);
          return render(rows);
        });
      } catch (err) {
        if (!(err instanceof LongList)) throw err;
        await streamList(res, err.rows, read, render);
        return undefined as never; // sent: the binder writes nothing after headers
      }
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

    async listAdminResources({ ctx, query, res }) {
      const read: ReadPage = (after, limit) =>
        ctx.db.selectFrom('resources').selectAll().where('id', '>', after).orderBy('id').limit(limit).execute();
      const render = (rows: ResourceRow[], all: boolean) => adminViews(ctx, rows, all);
      if (query.limit !== undefined) return listPage(res, '/admin/api/resources', { ...query, limit: query.limit }, read, render);
      return wholeList(res, query.after ?? 0, read, render);
    },

    async getAdminResource({ ctx, params }) {
      const row = await ctx.db.selectFrom('resources').selectAll().where('id', '=', params.id).executeTakeFirst();
      if (!row) throw notFound(`Resource ${params.id} does not exist`);
      const [admin] = await adminViews(ctx, [row]);
      const locations = await locationsOfOne(ctx.db, row.id);
      return { ...admin, incidents: await recentIncidents(ctx.db, row.id), locationResults: await locationResults(ctx.db, row, locations) };
    },

    async createResource({ ctx, body }) {
      checkResourceBody(body, ctx.clock.now());
      const row = await ctx.db
        .transaction()
        .execute((trx) => insertResource(ctx, trx, body))
        .catch((err: unknown) => {
          throw uniqueViolation(err, 'name') ?? err;
        });
      await state.visibility.refresh(row.id);
      ctx.bus.emit('resource.changed', { id: row.id });
      return toResource(row);
    },

    updateResource: (rc) => updateResource(state, rc),
    batchResources: (rc) => batchResources(state, rc),

    async deleteResource({ ctx, params }) {
      const found = await ctx.db.transaction().execute((trx) => deleteResourceRows(trx, params.id));
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
