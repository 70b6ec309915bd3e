import type { Static } from '@sinclair/typebox';
import type { StatusSummary } from '../../src/api/schemas/status-pages.ts';
import { publicCause } from '../../src/probes/public-cause.ts';
import { formatDateTime, formatNullable } from '../../src/time.ts';
import type { DaemonContext } from '../context.ts';
import { assetUrls } from './branding/asset-urls.ts';
import { type Audience, type LiveState, type PageRow, readLiveState, shownNames } from './live-state.ts';
import { MAX_POSTED, POSTED_RECENT_MS, readNotices, readPosted } from './posted-read.ts';
import { BAR_DAYS, barStart, DAY, incidentsPerDay, NO_UPTIME, type Uptime } from './uptime.ts';

export type Summary = Static<typeof StatusSummary>;
type Kind = 'INFORMATION' | 'WARNING' | 'PROBLEM';

/** The incidents section: open ones and those resolved within this, newest first, at most MAX_INCIDENTS. */
const RECENT_MS = 14 * DAY;
const MAX_INCIDENTS = 50;

/**
 * Everything a status page shows, for one audience: the live part (groups,
 * statuses, banner, maintenance), the uptime figures (`uptime`, read from the
 * rollups and cached by the caller), active announcements, and incidents.
 * The page and `GET /api/status-pages/{slug}/summary` are both made from it.
 */
export async function buildSummary(
  ctx: DaemonContext,
  page: PageRow,
  audience: Audience,
  uptime: (groupIds: number[]) => Promise<Map<number, Uptime>>,
  now = Date.now(),
): Promise<Summary> {
  const live = await readLiveState(ctx, page, audience, now);
  const shownIds = new Set(live.groups.flatMap((g) => g.resources.map((r) => r.id)));
  const names = shownNames(live);
  const [figures, announcements, incidents, posted, notices] = await Promise.all([
    shownIds.size ? uptime(live.groups.map((g) => g.id)) : Promise.resolve(new Map<number, Uptime>()),
    page.show_announcements
      ? ctx.db
          .selectFrom('announcements')
          .selectAll()
          .where('active', '=', 1)
          .where((eb) => eb.or([eb('active_until', 'is', null), eb('active_until', '>', now)]))
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .execute()
      : Promise.resolve([]),
    shownIds.size ? readIncidents(ctx, live, now) : Promise.resolve([]),
    readPosted(ctx, page.id, names, now - POSTED_RECENT_MS, MAX_POSTED),
    readNotices(ctx, page.id, now),
  ]);
  const assets = await assetUrls(ctx, page);
  const first = barStart(now);
  const days = Array.from({ length: BAR_DAYS }, (_, i) => new Date(first + i * DAY).toISOString().slice(0, 10));

  const perDay = incidentsPerDay(
    incidents.filter((i) => shownIds.has(i.resourceId)),
    now,
  );
  const zeros = new Array<number>(BAR_DAYS).fill(0);
  // A probe's message names addresses and ports: anonymous visitors get its kind unless the page says otherwise.
  const details = audience === 'user' || page.show_error_details === 1;

  return {
    page: {
      slug: page.slug,
      title: page.title,
      description: page.description,
      footer: page.footer,
      accentColor: page.accent_color,
      logoUrl: assets.logo,
      faviconUrl: assets.favicon,
      headerLink: page.header_link_url ? { url: page.header_link_url, text: page.header_link_text ?? page.header_link_url } : null,
      subscribe: { email: page.subscriptions === 1 && page.email_notifier_id !== null },
      feeds: { atom: `/status/${page.slug}/feed.atom`, rss: `/status/${page.slug}/feed.rss` },
    },
    postedIncidents: posted,
    generatedAt: formatDateTime(now),
    overall: live.overall,
    announcements: announcements.map((a) => ({
      id: a.id,
      kind: a.kind as Kind,
      content: a.content,
      activeUntil: formatNullable(a.active_until),
      createdAt: formatDateTime(a.created_at),
    })),
    days,
    groups: live.groups.map((g) => ({
      id: g.id,
      name: g.name,
      resources: g.resources.map((r) => {
        const u = figures.get(r.id) ?? NO_UPTIME;
        return {
          id: r.id,
          name: r.name,
          resourceType: r.resourceType,
          currentStatus: r.currentStatus,
          inMaintenance: r.inMaintenance,
          down: r.down,
          uptime: { h24: u.h24, d30: u.d30, d90: u.d90 },
          daily: u.daily,
          dailyIncidents: perDay.get(r.id) ?? zeros,
        };
      }),
    })),
    incidents: page.show_incidents
      ? incidents
          .filter((i) => shownIds.has(i.resourceId) && (i.resolvedAt === null || i.resolvedAt >= now - RECENT_MS))
          .slice(0, MAX_INCIDENTS)
          .map((i) => ({
            id: i.id,
            resourceId: i.resourceId,
            resourceName: names.get(i.resourceId) ?? '',
            openedAt: formatDateTime(i.openedAt),
            resolvedAt: formatNullable(i.resolvedAt),
            durationSeconds: Math.max(0, Math.round(((i.resolvedAt ?? now) - i.openedAt) / 1000)),
            cause: details ? i.cause : publicCause(i.errorCode, i.cause),
            errorCode: i.errorCode,
            maintenance: i.maintenance,
          }))
      : [],
    maintenance: {
      active: live.windows.filter((w) => w.startsAt <= now).map(windowOut),
      upcoming: live.windows.filter((w) => w.startsAt > now).map(windowOut),
      notices,
    },
  };
}

function windowOut(w: LiveState['windows'][number]) {
  return { id: w.id, name: w.name, startsAt: formatDateTime(w.startsAt), endsAt: formatDateTime(w.endsAt), resourceIds: w.resourceIds };
}

interface IncidentRow {
  id: number;
  resourceId: number;
  openedAt: number;
  resolvedAt: number | null;
  cause: string | null;
  errorCode: string | null;
  maintenance: boolean;
}

/** Incidents of the page's resources that were open at some time within the bar's 90 days, newest first. */
async function readIncidents(ctx: DaemonContext, live: LiveState, now: number): Promise<IncidentRow[]> {
  const members = ctx.db
    .selectFrom('resource_groups')
    .select('resource_id')
    .where(
      'group_id',
      'in',
      live.groups.map((g) => g.id),
    );
  const rows = await ctx.db
    .selectFrom('incidents')
    .select(['id', 'resource_id', 'opened_at', 'resolved_at', 'cause_message', 'cause_error_code', 'maintenance'])
    .where('subject_type', '=', 'resource')
    .where('resource_id', 'in', members)
    .where((eb) => eb.or([eb('resolved_at', 'is', null), eb('resolved_at', '>=', barStart(now))]))
    .orderBy('opened_at', 'desc')
    .orderBy('id', 'desc')
    .limit(20_000)
    .execute();
  return rows.map((r) => ({
    id: Number(r.id),
    resourceId: Number(r.resource_id),
    openedAt: Number(r.opened_at),
    resolvedAt: r.resolved_at === null ? null : Number(r.resolved_at),
    cause: r.cause_message,
    errorCode: r.cause_error_code,
    maintenance: Number(r.maintenance) === 1,
  }));
}
