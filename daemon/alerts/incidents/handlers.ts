import type { incidentOperations } from '../../../src/api/ops/incidents.ts';
import { notFound } from '../../../src/errors.ts';
import type { HandlersOf } from '../../http/bind.ts';
import { toIncident } from './mappers.ts';

type Ops = Pick<typeof incidentOperations, 'listIncidents' | 'getIncident'>;

/** `GET /admin/api/incidents` (paged like check history) and `GET /admin/api/incidents/{id}`. */
export const incidentHandlers: HandlersOf<Ops> = {
  async listIncidents({ ctx, query, res }) {
    let rows = ctx.db.selectFrom('incidents').selectAll();
    if (query.resourceId !== undefined) rows = rows.where('resource_id', '=', query.resourceId);
    if (query.agentId !== undefined) rows = rows.where('agent_id', '=', query.agentId);
    if (query.state === 'open') rows = rows.where('resolved_at', 'is', null);
    if (query.state === 'resolved') rows = rows.where('resolved_at', 'is not', null);
    if (query.before !== undefined) rows = rows.where('id', '<', query.before);
    const page = await rows
      .orderBy('id', 'desc')
      .limit(query.limit + 1)
      .execute();
    const more = page.length > query.limit;
    if (more) page.pop();
    if (more && page.length) {
      const next = new URLSearchParams({ limit: String(query.limit), before: String(page[page.length - 1].id) });
      if (query.resourceId !== undefined) next.set('resourceId', String(query.resourceId));
      if (query.agentId !== undefined) next.set('agentId', String(query.agentId));
      if (query.state !== undefined) next.set('state', query.state);
      res.setHeader('Link', `</admin/api/incidents?${next}>; rel="next"`);
    }
    const now = Date.now();
    return page.map((row) => toIncident(row, now));
  },

  async getIncident({ ctx, params }) {
    const row = await ctx.db.selectFrom('incidents').selectAll().where('id', '=', params.id).executeTakeFirst();
    if (!row) throw notFound(`Incident ${params.id} does not exist`);
    return toIncident(row);
  },
};
