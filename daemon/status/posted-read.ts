import type { Static } from '@sinclair/typebox';
import type { PostedIncident } from '../../src/api/schemas/status-incidents.ts';
import type { SummaryNotice } from '../../src/api/schemas/status-pages.ts';
import { formatDateTime, formatNullable } from '../../src/time.ts';
import { currentOrNext } from '../alerts/maintenance/schedule.ts';
import type { DaemonContext } from '../context.ts';

export type Posted = Static<typeof PostedIncident>;
export type Notice = Static<typeof SummaryNotice>;

/** The page shows open posted incidents and those resolved within this (older ones are on its history page). */
export const POSTED_RECENT_MS = 14 * 86_400_000;
/** The history page: posted incidents of the last 90 days. */
export const HISTORY_MS = 90 * 86_400_000;
/** Posted incidents on the page at most (open ones first): bounds the page whatever an operator posts. */
export const MAX_POSTED = 50;
/** On the history page at most. */
export const MAX_HISTORY = 500;
/** Timeline entries per incident at most (the newest). */
const MAX_UPDATES = 100;

/**
 * The posted incidents of a page that were open at some time since `since`:
 * open ones first (unless `openFirst` is false), then the newest first, at
 * most `limit`. `names` are the
 * resources this audience sees on the page: an incident lists only those
 * (one whose resources are all hidden still shows its title and timeline: it
 * was posted on this page for its readers). Four queries, whatever the count.
 */
export async function readPosted(
  ctx: DaemonContext,
  pageId: number,
  names: ReadonlyMap<number, string>,
  since: number,
  limit: number,
  openFirst = true,
): Promise<Posted[]> {
  const newest = (resolved: boolean) =>
    ctx.db
      .selectFrom('status_incidents')
      .selectAll()
      .where('page_id', '=', pageId)
      .where((eb) => (resolved ? eb('resolved_at', '>=', since) : eb('resolved_at', 'is', null)))
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
  const [open, resolved] = await Promise.all([newest(false), newest(true)]);
  const chosen = openFirst
    ? [...open, ...resolved].slice(0, limit)
    : [...open, ...resolved].sort((a, b) => Number(b.created_at) - Number(a.created_at) || Number(b.id) - Number(a.id)).slice(0, limit);
  if (chosen.length === 0) return [];
  const ids = chosen.map((r) => Number(r.id));
  const [resources, updates] = await Promise.all([
    ctx.db.selectFrom('status_incident_resources').selectAll().where('incident_id', 'in', ids).execute(),
    ctx.db
      .selectFrom('status_incident_updates')
      .selectAll()
      .where('incident_id', 'in', ids)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute(),
  ]);
  const byIncident = new Map<number, Posted>(
    chosen.map((r) => [
      Number(r.id),
      {
        id: Number(r.id),
        pageId: Number(r.page_id),
        title: r.title,
        impact: r.impact,
        state: r.state,
        sourceIncidentId: r.source_incident_id === null ? null : Number(r.source_incident_id),
        resources: [],
        updates: [],
        createdAt: formatDateTime(Number(r.created_at)),
        updatedAt: formatDateTime(Number(r.updated_at)),
        resolvedAt: formatNullable(r.resolved_at === null ? null : Number(r.resolved_at)),
      },
    ]),
  );
  for (const r of resources) {
    const name = names.get(Number(r.resource_id));
    if (name !== undefined) byIncident.get(Number(r.incident_id))?.resources.push({ id: Number(r.resource_id), name, impact: r.impact });
  }
  for (const i of byIncident.values()) i.resources.sort((a, b) => a.name.localeCompare(b.name) || a.id - b.id);
  for (const u of updates) {
    const incident = byIncident.get(Number(u.incident_id));
    if (!incident || incident.updates.length >= MAX_UPDATES) continue;
    incident.updates.push({
      id: Number(u.id),
      state: u.state,
      message: u.message,
      messageHtml: u.message_html,
      automatic: Number(u.automatic) === 1,
      createdAt: formatDateTime(Number(u.created_at)),
    });
  }
  return [...byIncident.values()];
}

/**
 * The maintenance notices of a page whose window is in progress or still to
 * come (a weekly window: its current or next opening), soonest first. The
 * windows are the alerts capability's, in memory. A notice shows whatever
 * resources its window covers: the operator chose to post it on this page.
 */
export async function readNotices(ctx: DaemonContext, pageId: number, now: number): Promise<Notice[]> {
  const rows = await ctx.db
    .selectFrom('status_maintenance_notices')
    .selectAll()
    .where('page_id', '=', pageId)
    .orderBy('id')
    .limit(MAX_POSTED)
    .execute();
  if (rows.length === 0) return [];
  const windows = new Map(ctx.maintenance.windows.map((w) => [w.id, w]));
  const notices: Array<Notice & { start: number }> = [];
  for (const r of rows) {
    const w = windows.get(Number(r.window_id));
    const o = w && currentOrNext(w.schedule, now);
    if (!o) continue;
    notices.push({
      id: Number(r.id),
      windowId: Number(r.window_id),
      title: r.title,
      messageHtml: r.message_html,
      startsAt: formatDateTime(o.start),
      endsAt: formatDateTime(o.end),
      inProgress: o.start <= now,
      start: o.start,
    });
  }
  return notices.sort((a, b) => a.start - b.start || a.id - b.id).map(({ start: _, ...n }) => n);
}
