import { notFound } from '../../src/errors.ts';
import type { DaemonContext } from '../context.ts';
import { serveStream } from '../events/sse.ts';
import type { Handlers } from '../http/bind.ts';
import { toLogEntry } from './mappers.ts';
import { routeLogChannel } from './topology-events.ts';

/** A route-log channel nobody watches is forgotten after this long (a reconnect within it still replays). */
const IDLE_CHANNEL_MS = 60_000;

async function requireRoute(ctx: DaemonContext, id: number): Promise<void> {
  const route = await ctx.db.selectFrom('routes').select('id').where('id', '=', id).executeTakeFirst();
  if (!route) throw notFound(`Route ${id} does not exist`);
}

/** `GET /admin/api/routes/{id}/log` and its live stream. */
export const routeLogHandlers: Handlers = {
  async getRouteLog({ ctx, params, query, res }) {
    await requireRoute(ctx, params.id);
    let q = ctx.db.selectFrom('route_log').selectAll().where('route_id', '=', params.id);
    if (query.before !== undefined) q = q.where('id', '<', query.before);
    const rows = await q
      .orderBy('id', 'desc')
      .limit(query.limit + 1)
      .execute();
    const page = rows.slice(0, query.limit);
    if (rows.length > query.limit) {
      const next = `/admin/api/routes/${params.id}/log?limit=${query.limit}&before=${page.at(-1)!.id}`;
      res.setHeader('Link', `<${next}>; rel="next"`);
    }
    return page.map(toLogEntry);
  },

  async routeLogEvents({ ctx, params, req, res }) {
    await requireRoute(ctx, params.id);
    const name = routeLogChannel(params.id);
    // No SNAPSHOT here: the stream carries new entries only; the REST log holds the past.
    await serveStream(req, res, ctx.events.channel(name), {
      heartbeatMs: ctx.config.sseHeartbeatMs,
      maxQueuedBytes: ctx.config.sseMaxQueuedBytes,
      onClose: () => ctx.events.dropWhenIdle(name, IDLE_CHANNEL_MS),
    });
  },
};
