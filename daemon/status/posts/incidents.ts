import type { statusIncidentOperations } from '../../../src/api/ops/status-incidents.ts';
import { MAX_INCIDENT_UPDATES } from '../../../src/api/schemas/status-incidents.ts';
import { conflict, invalidField, notFound } from '../../../src/errors.ts';
import type { HandlersOf } from '../../http/bind.ts';
import { checkAffected, replaceAffected } from './affected.ts';
import { renderMessage } from './markdown.ts';
import { findPage, postsChanged } from './page.ts';
import { promote } from './promote.ts';
import { readPostedIncident, readPostedIncidents } from './read.ts';
import { announceEntry, insertEntry } from './timeline.ts';

type Ops = Pick<
  typeof statusIncidentOperations,
  'listPostedIncidents' | 'getPostedIncident' | 'openPostedIncident' | 'postIncidentUpdate' | 'deletePostedIncident'
>;

/** Handlers of `/admin/api/status-pages/{id}/incidents/**` (docs/API.md#posted-incidents). */
export const postedIncidentHandlers: HandlersOf<Ops> = {
  async listPostedIncidents({ ctx, params, query }) {
    await findPage(ctx.db, params.id);
    return readPostedIncidents(ctx.db, params.id, { state: query.state, limit: query.limit });
  },

  async getPostedIncident({ ctx, params }) {
    await findPage(ctx.db, params.id);
    return readPostedIncident(ctx.db, params.id, params.incidentId);
  },

  async openPostedIncident({ ctx, params, body }) {
    if (body.fromIncidentId !== undefined) {
      const id = await promote(ctx, params.id, { ...body, fromIncidentId: body.fromIncidentId });
      postsChanged(ctx, params.id, true);
      return readPostedIncident(ctx.db, params.id, id);
    }
    if (body.title === undefined) throw invalidField('title', 'is required (unless fromIncidentId is given)');
    if (body.impact === undefined) throw invalidField('impact', 'is required (unless fromIncidentId is given)');
    if (body.message === undefined) throw invalidField('message', "is required: the first update's text");
    const { title, impact, message } = body;
    const messageHtml = renderMessage(message);
    const id = await ctx.db.transaction().execute(async (trx) => {
      const page = await findPage(trx, params.id);
      const affected = await checkAffected(trx, page, body.resources ?? [], impact);
      const now = Date.now();
      const state = body.state ?? 'investigating';
      const row = await trx
        .insertInto('status_incidents')
        .values({
          page_id: page.id,
          title,
          impact,
          state,
          source_incident_id: null,
          created_at: now,
          updated_at: now,
          resolved_at: state === 'resolved' ? now : null,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const incidentId = Number(row.id);
      await replaceAffected(trx, incidentId, affected);
      const updateId = await insertEntry(trx, incidentId, { state, message, messageHtml, at: now });
      await announceEntry(trx, page, incidentId, updateId, now);
      return incidentId;
    });
    postsChanged(ctx, params.id, true);
    return readPostedIncident(ctx.db, params.id, id);
  },

  async postIncidentUpdate({ ctx, params, body }) {
    const messageHtml = renderMessage(body.message);
    await ctx.db.transaction().execute(async (trx) => {
      const page = await findPage(trx, params.id);
      const current = await trx
        .selectFrom('status_incidents')
        .selectAll()
        .where('id', '=', params.incidentId)
        .where('page_id', '=', page.id)
        .executeTakeFirst();
      if (!current) throw notFound(`Status page ${page.id} has no posted incident ${params.incidentId}`);
      const { count } = await trx
        .selectFrom('status_incident_updates')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where('incident_id', '=', current.id)
        .executeTakeFirstOrThrow();
      if (Number(count) >= MAX_INCIDENT_UPDATES) {
        throw conflict(`Posted incident ${current.id} holds ${MAX_INCIDENT_UPDATES} updates, the most one may: open a new one`);
      }
      const impact = body.impact ?? current.impact;
      if (body.resources) await replaceAffected(trx, current.id, await checkAffected(trx, page, body.resources, impact));
      // Two updates within one millisecond (or a pod's clock behind another's) still read in the order they were posted.
      const last = await trx
        .selectFrom('status_incident_updates')
        .select((eb) => eb.fn.max('created_at').as('at'))
        .where('incident_id', '=', current.id)
        .executeTakeFirst();
      const now = Math.max(Date.now(), Number(last?.at ?? 0));
      await trx
        .updateTable('status_incidents')
        .set({
          title: body.title ?? current.title,
          impact,
          state: body.state,
          updated_at: now,
          // Resolved keeps its first resolution time if it is said twice; any other state opens it again.
          resolved_at: body.state === 'resolved' ? (current.resolved_at ?? now) : null,
        })
        .where('id', '=', current.id)
        .execute();
      const updateId = await insertEntry(trx, current.id, { state: body.state, message: body.message, messageHtml, at: now });
      await announceEntry(trx, page, current.id, updateId, now);
    });
    postsChanged(ctx, params.id, true);
    return readPostedIncident(ctx.db, params.id, params.incidentId);
  },

  async deletePostedIncident({ ctx, params }) {
    await findPage(ctx.db, params.id);
    const gone = await ctx.db
      .deleteFrom('status_incidents')
      .where('id', '=', params.incidentId)
      .where('page_id', '=', params.id)
      .executeTakeFirst();
    if (Number(gone.numDeletedRows) === 0) throw notFound(`Status page ${params.id} has no posted incident ${params.incidentId}`);
    postsChanged(ctx, params.id, false);
    return { status: 'deleted' as const };
  },
};
