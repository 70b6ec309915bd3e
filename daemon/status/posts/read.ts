import type { Static } from '@sinclair/typebox';
import type { Kysely, Transaction } from 'kysely';
import type { PostedIncident } from '../../../src/api/schemas/status-incidents.ts';
import { notFound } from '../../../src/errors.ts';
import { formatDateTime, formatNullable } from '../../../src/time.ts';
import type { Database } from '../../store/schema.ts';

export type Posted = Static<typeof PostedIncident>;
type Db = Kysely<Database> | Transaction<Database>;

export interface PostedFilter {
  state?: 'open' | 'resolved';
  limit?: number;
  /** Only these incidents (of the page). */
  ids?: number[];
  /** Open ones, and those resolved at or after this time (the status page's 14 days, its history's 90). */
  resolvedSince?: number;
}

/**
 * A page's posted incidents in the API's shape: open ones first, then the newest,
 * each with its resources (by name) and its timeline, newest first. Three queries
 * whatever the count, so a page of 50 incidents costs what one does.
 */
export async function readPostedIncidents(db: Db, pageId: number, filter: PostedFilter = {}): Promise<Posted[]> {
  let query = db.selectFrom('status_incidents').selectAll().where('page_id', '=', pageId);
  if (filter.state === 'open') query = query.where('resolved_at', 'is', null);
  if (filter.state === 'resolved') query = query.where('resolved_at', 'is not', null);
  if (filter.resolvedSince !== undefined) {
    const since = filter.resolvedSince;
    query = query.where((eb) => eb.or([eb('resolved_at', 'is', null), eb('resolved_at', '>=', since)]));
  }
  if (filter.ids) query = filter.ids.length ? query.where('id', 'in', filter.ids) : query.where('id', '=', -1);
  const rows = await query
    .orderBy((eb) => eb.case().when('resolved_at', 'is', null).then(0).else(1).end())
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(filter.limit ?? 1000)
    .execute();
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const [resources, updates] = await Promise.all([
    db
      .selectFrom('status_incident_resources as sir')
      .innerJoin('resources as r', 'r.id', 'sir.resource_id')
      .select(['sir.incident_id', 'sir.resource_id', 'sir.impact', 'r.name'])
      .where('sir.incident_id', 'in', ids)
      .orderBy('r.name')
      .orderBy('r.id')
      .execute(),
    db
      .selectFrom('status_incident_updates')
      .selectAll()
      .where('incident_id', 'in', ids)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute(),
  ]);
  const byIncident = new Map<number, Posted>();
  const out = rows.map((row) => {
    const incident: Posted = {
      id: row.id,
      pageId: row.page_id,
      title: row.title,
      impact: row.impact,
      state: row.state,
      sourceIncidentId: row.source_incident_id,
      resources: [],
      updates: [],
      createdAt: formatDateTime(row.created_at),
      updatedAt: formatDateTime(row.updated_at),
      resolvedAt: formatNullable(row.resolved_at),
    };
    byIncident.set(row.id, incident);
    return incident;
  });
  for (const r of resources) byIncident.get(r.incident_id)?.resources.push({ id: r.resource_id, name: r.name, impact: r.impact });
  for (const u of updates) {
    byIncident.get(u.incident_id)?.updates.push({
      id: u.id,
      state: u.state,
      message: u.message,
      messageHtml: u.message_html,
      automatic: u.automatic === 1,
      createdAt: formatDateTime(u.created_at),
    });
  }
  return out;
}

/** One posted incident of the page; 404 when the page has no such incident. */
export async function readPostedIncident(db: Db, pageId: number, incidentId: number): Promise<Posted> {
  const [incident] = await readPostedIncidents(db, pageId, { ids: [incidentId] });
  if (!incident) throw notFound(`Status page ${pageId} has no posted incident ${incidentId}`);
  return incident;
}
