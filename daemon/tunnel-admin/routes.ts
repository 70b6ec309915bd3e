import { HttpError, notFound } from '../../src/errors.ts';
import type { Handlers } from '../http/bind.ts';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';
import { certificateOfHost } from '../certs/route-state.ts';
import { checkRouteAgainstPages } from './hostname-clash.ts';
import { toRoute } from './mappers.ts';
import { checkPoolAgents, loadPools, poolColumns, poolOf, writePool } from './route-pool.ts';
import { poolMembers } from './route-pool-view.ts';
import { accessColumns, accessDraft } from './route-access.ts';
import { checkPortFree, draftFromCreate, draftFromUpdate, type RouteDraft } from './route-rules.ts';
import { publishTopology, routeLogChannel } from './topology-events.ts';

const conflictOn = (field: string, detail: string) => new HttpError(409, 'conflict', detail, { errors: [{ field, message: detail }] });

type ClashField = 'name' | 'listenPort' | 'hostname';

/** The 409 for a draft that clashes with route `other` on `field`, naming it. */
function clashWith(field: ClashField, other: string, d: RouteDraft): HttpError {
  if (field === 'name') return conflictOn('name', `A route named ${d.name} exists`);
  if (field === 'listenPort') return conflictOn('listenPort', `Route ${other} listens on port ${d.listenPort}`);
  return conflictOn('hostname', `Route ${other} serves ${d.hostname}${d.pathPrefix}`);
}

/** Rules that need the database: agents exist, name, hostname+prefix and port unique (409). */
async function checkAgainstOthers(trx: Transaction<Database> | Kysely<Database>, d: RouteDraft, selfId: number | null) {
  await checkPoolAgents(trx, d.pool);
  let others = trx.selectFrom('routes').select(['id', 'name', 'hostname', 'path_prefix', 'listen_port']);
  if (selfId !== null) others = others.where('id', '!=', selfId);
  const clash = await others
    .where((eb) =>
      eb.or([
        eb('name', '=', d.name),
        ...(d.hostname !== null ? [eb.and([eb('hostname', '=', d.hostname), eb('path_prefix', '=', d.pathPrefix ?? '/')])] : []),
        ...(d.listenPort !== null ? [eb('listen_port', '=', d.listenPort)] : []),
      ]),
    )
    .executeTakeFirst();
  if (!clash) return checkRouteAgainstPages(trx, d.hostname, d.pathPrefix);
  const field =
    clash.name === d.name ? 'name' : d.listenPort !== null && Number(clash.listen_port) === d.listenPort ? 'listenPort' : 'hostname';
  throw clashWith(field, clash.name, d);
}

function columns(d: RouteDraft) {
  return {
    name: d.name,
    type: d.type,
    ...poolColumns(d.pool),
    target: d.target,
    hostname: d.hostname,
    path_prefix: d.pathPrefix,
    listen_port: d.listenPort,
    allow_encoded_slashes: d.allowEncodedSlashes ? 1 : 0,
    enabled: d.enabled ? 1 : 0,
  };
}

/**
 * A unique index won a race the checks lost (another pod, or a concurrent request, inserted
 * first): still a 409 naming the field and the route now holding it, never a 500.
 */
async function uniqueViolation(db: Kysely<Database>, err: unknown, d: RouteDraft): Promise<HttpError | undefined> {
  const code = String((err as { code?: unknown })?.code ?? '');
  if (!code.includes('CONSTRAINT_UNIQUE') && code !== '23505') return undefined;
  const text = `${(err as Error).message} ${String((err as { constraint?: unknown }).constraint ?? '')}`;
  const field: ClashField = /listen_port/.test(text) ? 'listenPort' : /hostname|host_prefix/.test(text) ? 'hostname' : 'name';
  if (field === 'name') return clashWith(field, d.name, d);
  const others = db.selectFrom('routes').select('name');
  const other = await (field === 'hostname'
    ? others.where('hostname', '=', d.hostname).where('path_prefix', '=', d.pathPrefix ?? '/')
    : others.where('listen_port', '=', d.listenPort)
  )
    .executeTakeFirst()
    .catch(() => undefined);
  return clashWith(field, other?.name ?? 'another route', d);
}

async function persist<T>(db: Kysely<Database>, d: RouteDraft, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw (await uniqueViolation(db, err, d)) ?? err;
  }
}

/** Handlers of `/admin/api/routes`. Every change tells the data plane and the topology stream. */
export const routeHandlers: Handlers = {
  async listRoutes({ ctx }) {
    const [rows, pools] = await Promise.all([ctx.db.selectFrom('routes').selectAll().orderBy('id').execute(), loadPools(ctx.db)]);
    return rows.map((row) => toRoute(row, pools.get(Number(row.id))));
  },

  async createRoute({ ctx, body }) {
    const draft = draftFromCreate(body);
    const access = await accessDraft(draft.type, body, null, Boolean(ctx.oidc));
    if (draft.listenPort !== null) {
      await checkAgainstOthers(ctx.db, draft, null); // cheap 400/409 before touching the network
      await checkPortFree(ctx, draft.listenPort);
    }
    const row = await persist(ctx.db, draft, () =>
      ctx.db.transaction().execute(async (trx) => {
        await checkAgainstOthers(trx, draft, null);
        const now = Date.now();
        const inserted = await trx
          .insertInto('routes')
          .values({ ...columns(draft), ...accessColumns(access), created_at: now, updated_at: now })
          .returningAll()
          .executeTakeFirstOrThrow();
        await writePool(trx, Number(inserted.id), draft.pool.agents);
        return inserted;
      }),
    );
    const route = toRoute(row, (await loadPools(ctx.db, [Number(row.id)])).get(Number(row.id)));
    ctx.tunnel.routesChanged();
    publishTopology(ctx, 'ROUTE_CREATED', { route });
    return route;
  },

  async getRoute({ ctx, params }) {
    const row = await ctx.db.selectFrom('routes').selectAll().where('id', '=', params.id).executeTakeFirst();
    if (!row) throw notFound(`Route ${params.id} does not exist`);
    const agents = (await loadPools(ctx.db, [params.id])).get(params.id);
    // The detail shows each pool agent now, and the certificate the HTTPS edge serves for the hostname (docs/API.md#routes).
    const route = { ...toRoute(row, agents), pool: await poolMembers(ctx, row, agents ?? []) };
    return row.type === 'HTTP' && row.hostname ? { ...route, certificate: await certificateOfHost(ctx, row.hostname) } : route;
  },

  async updateRoute({ ctx, params, body }) {
    const current = await ctx.db.selectFrom('routes').selectAll().where('id', '=', params.id).executeTakeFirst();
    if (!current) throw notFound(`Route ${params.id} does not exist`);
    const currentPool = poolOf(current, (await loadPools(ctx.db, [params.id])).get(params.id));
    const draft = draftFromUpdate(current, currentPool, body);
    const access = await accessDraft(draft.type, body, current, Boolean(ctx.oidc));
    // An enabled route's own port is held by the data plane's listener: only a new port, or
    // the port of a route being enabled, is probed.
    const portChanged = draft.listenPort !== (current.listen_port === null ? null : Number(current.listen_port));
    if (draft.listenPort !== null && (portChanged || (draft.enabled && !current.enabled))) {
      await checkAgainstOthers(ctx.db, draft, params.id);
      await checkPortFree(ctx, draft.listenPort);
    }
    const row = await persist(ctx.db, draft, () =>
      ctx.db.transaction().execute(async (trx) => {
        await checkAgainstOthers(trx, draft, params.id);
        const updated = await trx
          .updateTable('routes')
          .set({ ...columns(draft), ...accessColumns(access), updated_at: Date.now() })
          .where('id', '=', params.id)
          .returningAll()
          .executeTakeFirst();
        if (!updated) throw notFound(`Route ${params.id} does not exist`);
        await writePool(trx, params.id, draft.pool.agents);
        return updated;
      }),
    );
    const route = toRoute(row, (await loadPools(ctx.db, [params.id])).get(params.id));
    ctx.tunnel.routesChanged();
    publishTopology(ctx, 'ROUTE_UPDATED', { route });
    return route;
  },

  matchRoute: ({ ctx, query }) => ctx.tunnel.matchRoute(query.host, query.path ?? '/', query.clientIp ?? null),

  async deleteRoute({ ctx, params }) {
    const row = await ctx.db.deleteFrom('routes').where('id', '=', params.id).returning(['id', 'name']).executeTakeFirst();
    if (!row) throw notFound(`Route ${params.id} does not exist`);
    ctx.tunnel.routesChanged();
    ctx.events.drop(routeLogChannel(params.id));
    publishTopology(ctx, 'ROUTE_DELETED', { id: Number(row.id), name: row.name });
    return { status: 'deleted' as const };
  },
};
