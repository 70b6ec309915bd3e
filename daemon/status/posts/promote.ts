import type { Static } from '@sinclair/typebox';
import type { PostedIncidentOpen } from '../../../src/api/schemas/status-incidents.ts';
import { conflict, invalidField } from '../../../src/errors.ts';
import { publicCause } from '../../../src/probes/public-cause.ts';
import type { DaemonContext } from '../../context.ts';
import type { PostedState } from '../../store/schema.ts';
import { checkAffected, isOnPage, replaceAffected } from './affected.ts';
import { findPage } from './page.ts';
import { renderMessage } from './markdown.ts';
import { announceEntry, type Entry, insertEntry } from './timeline.ts';

type Body = Static<typeof PostedIncidentOpen> & { fromIncidentId: number };

/** A resource name as Markdown text inside a line: its emphasis, code, link, HTML and entity characters stay characters. */
const literal = (text: string) => text.replace(/[\\`*_[\]<>~&]/g, '\\$&');

/**
 * The automatic incident's own timeline, as the page would have told it: its
 * opening (with the public cause only, as anonymous visitors see it: the page
 * is public whatever its showErrorDetails) and its resolution, if any.
 */
function automaticEntries(
  name: string,
  source: { opened_at: number; resolved_at: number | null; cause_error_code: string | null; cause_message: string | null },
): Entry[] {
  const cause = publicCause(source.cause_error_code, source.cause_message);
  const opened = `Monitoring found **${literal(name)}** down${cause ? ` (${literal(cause)})` : ''}.`;
  const entries: Entry[] = [
    { state: 'investigating', message: opened, messageHtml: renderMessage(opened), automatic: true, at: source.opened_at },
  ];
  if (source.resolved_at !== null) {
    const back = `Monitoring found **${literal(name)}** back up.`;
    entries.push({ state: 'resolved', message: back, messageHtml: renderMessage(back), automatic: true, at: source.resolved_at });
  }
  return entries;
}

/**
 * Promotes an automatic incident (from checks) to a posted one on a page: the
 * timeline starts with its automatic entries, its resource is affected (with the
 * body's others), and the operator's message, if any, is the newest entry. One
 * outbox row, for the newest entry: readers hear of the incident once, not of
 * each entry of a past they did not see. Returns the posted incident's id.
 */
export async function promote(ctx: DaemonContext, pageId: number, body: Body): Promise<number> {
  const field = 'fromIncidentId';
  const postedHtml = body.message === undefined ? undefined : renderMessage(body.message);
  return ctx.db.transaction().execute(async (trx) => {
    const page = await findPage(trx, pageId);
    const source = await trx.selectFrom('incidents').selectAll().where('id', '=', body.fromIncidentId).executeTakeFirst();
    if (!source) throw invalidField(field, `incident ${body.fromIncidentId} does not exist`);
    if (source.resource_id === null) throw invalidField(field, `incident ${source.id} is an agent's: only a resource's can be posted`);
    if (!(await isOnPage(trx, page, source.resource_id))) {
      throw invalidField(field, `the resource of incident ${source.id} is not on status page ${page.slug}`);
    }
    const taken = await trx
      .selectFrom('status_incidents')
      .select('id')
      .where('page_id', '=', page.id)
      .where('source_incident_id', '=', source.id)
      .executeTakeFirst();
    if (taken) throw conflict(`Incident ${source.id} is already posted on ${page.slug} as ${taken.id}`, field);
    const resource = await trx.selectFrom('resources').select('name').where('id', '=', source.resource_id).executeTakeFirstOrThrow();

    const impact = body.impact ?? 'major';
    const listed = body.resources ?? [];
    const withSource = listed.some((r) => r.id === source.resource_id) ? listed : [{ id: source.resource_id }, ...listed];
    const affected = await checkAffected(trx, page, withSource, impact);
    const entries = automaticEntries(resource.name, source);
    const now = Math.max(Date.now(), entries[entries.length - 1].at);
    if (body.message !== undefined && postedHtml !== undefined) {
      const state: PostedState = body.state ?? (source.resolved_at === null ? 'investigating' : 'resolved');
      entries.push({ state, message: body.message, messageHtml: postedHtml, at: now });
    } else if (body.state !== undefined) {
      throw invalidField('state', 'comes with a message: the update it opens with');
    }
    const newest = entries[entries.length - 1];
    const resolvedAt = newest.state === 'resolved' ? (source.resolved_at ?? newest.at) : null;
    const row = await trx
      .insertInto('status_incidents')
      .values({
        page_id: page.id,
        title: body.title ?? `${resource.name} outage`.slice(0, 200),
        impact,
        state: newest.state,
        source_incident_id: source.id,
        created_at: source.opened_at,
        updated_at: now,
        resolved_at: resolvedAt,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const id = Number(row.id);
    await replaceAffected(trx, id, affected);
    let last = 0;
    for (const entry of entries) last = await insertEntry(trx, id, entry);
    await announceEntry(trx, page, id, last, now);
    return id;
  });
}
