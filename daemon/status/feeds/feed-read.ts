import type { PostedImpact, PostedState } from '../../store/schema.ts';
import type { DaemonContext } from '../../context.ts';
import type { PageRow } from '../live-state.ts';
import { DAY } from '../uptime.ts';

/** The feeds carry the incidents updated within the history page's 90 days, at most this many (Statuspage's feeds hold about 25). */
export const FEED_MAX_ENTRIES = 50;
export const FEED_DAYS = 90;

export interface FeedUpdate {
  state: PostedState;
  messageHtml: string;
  createdAt: number;
}

/** One posted incident as a feed entry: its resources are those anonymous visitors see on the page, nothing else. */
export interface FeedIncident {
  id: number;
  title: string;
  impact: PostedImpact;
  state: PostedState;
  createdAt: number;
  updatedAt: number;
  resources: Array<{ name: string; impact: PostedImpact }>;
  /** Newest first. */
  updates: FeedUpdate[];
}

/**
 * The page's posted incidents for its feeds, most recently updated first.
 * `publicResources` (id to name) are the resources the page shows to
 * anonymous visitors: an affected resource outside it (an AUTHENTICATED or
 * HIDDEN group's, or one not on the page) is left out of the entry, not
 * named; the incident itself stays, as it does on the page. Three queries.
 */
export async function readFeedIncidents(
  ctx: DaemonContext,
  page: PageRow,
  publicResources: Map<number, string>,
  now = Date.now(),
): Promise<FeedIncident[]> {
  const rows = await ctx.db
    .selectFrom('status_incidents')
    .select(['id', 'title', 'impact', 'state', 'created_at', 'updated_at'])
    .where('page_id', '=', page.id)
    .where('updated_at', '>=', now - FEED_DAYS * DAY)
    .orderBy('updated_at', 'desc')
    .orderBy('id', 'desc')
    .limit(FEED_MAX_ENTRIES)
    .execute();
  if (rows.length === 0) return [];
  const ids = rows.map((r) => Number(r.id));
  const [updates, affected] = await Promise.all([
    ctx.db
      .selectFrom('status_incident_updates')
      .select(['incident_id', 'state', 'message_html', 'created_at'])
      .where('incident_id', 'in', ids)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute(),
    ctx.db
      .selectFrom('status_incident_resources')
      .select(['incident_id', 'resource_id', 'impact'])
      .where('incident_id', 'in', ids)
      .orderBy('resource_id')
      .execute(),
  ]);
  const byId = new Map<number, FeedIncident>(
    rows.map((r) => [
      Number(r.id),
      {
        id: Number(r.id),
        title: r.title,
        impact: r.impact,
        state: r.state,
        createdAt: Number(r.created_at),
        updatedAt: Number(r.updated_at),
        resources: [],
        updates: [],
      },
    ]),
  );
  for (const u of updates) {
    byId.get(Number(u.incident_id))?.updates.push({ state: u.state, messageHtml: u.message_html, createdAt: Number(u.created_at) });
  }
  for (const a of affected) {
    const name = publicResources.get(Number(a.resource_id));
    if (name !== undefined) byId.get(Number(a.incident_id))?.resources.push({ name, impact: a.impact });
  }
  return [...byId.values()];
}
