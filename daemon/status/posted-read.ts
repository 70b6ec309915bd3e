import type { Static } from '@sinclair/typebox';
import type { SummaryNotice } from '../../src/api/schemas/status-pages.ts';
import { formatDateTime } from '../../src/time.ts';
import { currentOrNext } from '../alerts/maintenance/schedule.ts';
import type { DaemonContext } from '../context.ts';
import { type Posted, readPostedIncidents } from './posts/read.ts';

export type { Posted };
export type Notice = Static<typeof SummaryNotice>;

/** The page shows open posted incidents and those resolved within this (older ones are on its history page). */
export const POSTED_RECENT_MS = 14 * 86_400_000;
/** The history page: posted incidents of the last 90 days. */
export const HISTORY_MS = 90 * 86_400_000;
/** Posted incidents on the page at most (open ones first): bounds the page whatever an operator posts. */
export const MAX_POSTED = 50;
/** On the history page at most. */
export const MAX_HISTORY = 500;

/**
 * The posted incidents of a page open now or resolved since `since`, as
 * `names` lets this audience see them: open ones first (unless `openFirst`
 * is false), then the newest first, at most `limit`. `names` are the resources
 * this audience sees on the page: an incident lists only those (one whose
 * resources are all hidden still shows its title and timeline: it was posted
 * on this page for its readers).
 */
export async function readPosted(
  ctx: DaemonContext,
  pageId: number,
  names: ReadonlyMap<number, string>,
  since: number,
  limit: number,
  openFirst = true,
): Promise<Posted[]> {
  const all = await readPostedIncidents(ctx.db, pageId, { resolvedSince: since, limit });
  for (const i of all) i.resources = i.resources.filter((r) => names.has(r.id));
  return openFirst ? all : all.sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id - a.id);
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
