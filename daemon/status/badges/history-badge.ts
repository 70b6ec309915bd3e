import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DaemonContext } from '../../context.ts';
import { esc, pct, xmlChars } from '../render/escape.ts';
import { readTally } from '../uptime-read.ts';
import { BAR_DAYS, barStart, DAY, incidentsPerDay, NO_UPTIME, uptimeOf } from '../uptime.ts';
import { badgeResource, sendBadge } from './badges.ts';

/** A day's cell: 4 px and a 1 px gap, as thin as the page's bar at 56rem. */
const CELL = 4;
const GAP = 1;
const HEIGHT = 20;
export const HISTORY_WIDTH = BAR_DAYS * (CELL + GAP) - GAP;

/**
 * The page's bar colours (daemon/status/render/page-css.ts), light and dark:
 * the badge follows the scheme of whatever shows it.
 */
const STYLE =
  'rect{fill:#2da44e}.a{fill:#7bc96f}.b{fill:#d4a72c}.c{fill:#cf222e}.n{fill:#d1d9e0}' +
  '@media (prefers-color-scheme:dark){rect{fill:#2ea043}.a{fill:#56d364}.b{fill:#bb8009}.c{fill:#da3633}.n{fill:#3d444d}}';

/** The page's levels (render/page-html.ts): 100 %, ≥ 99 %, ≥ 95 %, below, no checks. */
const level = (uptime: number | null) => (uptime === null ? 'n' : uptime >= 100 ? '' : uptime >= 99 ? 'a' : uptime >= 95 ? 'b' : 'c');

/** Incidents of one resource open at some time of the bar's 90 days (those of the page's bar). */
async function readIncidents(ctx: DaemonContext, resourceId: number, now: number) {
  const rows = await ctx.db
    .selectFrom('incidents')
    .select(['opened_at', 'resolved_at'])
    .where('subject_type', '=', 'resource')
    .where('resource_id', '=', resourceId)
    .where((eb) => eb.or([eb('resolved_at', 'is', null), eb('resolved_at', '>=', barStart(now))]))
    .limit(20_000)
    .execute();
  return rows.map((r) => ({
    resourceId,
    openedAt: Number(r.opened_at),
    resolvedAt: r.resolved_at === null ? null : Number(r.resolved_at),
  }));
}

/** The 90-day bar as SVG: one <rect> per UTC day, oldest first, each with its date, uptime and incidents in a <title>. */
export function historySvg(name: string, daily: Array<number | null>, incidents: number[], d90: number | null, now: number): string {
  const first = barStart(now);
  const label = xmlChars(`${name}: uptime per day over 90 days, ${d90 === null ? 'no data' : pct(d90)}`);
  let cells = '';
  for (let d = 0; d < BAR_DAYS; d++) {
    const date = new Date(first + d * DAY).toISOString().slice(0, 10);
    const n = incidents[d];
    const note = n ? `, ${n} incident${n > 1 ? 's' : ''}` : '';
    const cls = level(daily[d]);
    cells +=
      `<rect${cls ? ` class="${cls}"` : ''} x="${d * (CELL + GAP)}" width="${CELL}" height="${HEIGHT}" rx="1">` +
      `<title>${date}: ${daily[d] === null ? 'no data' : pct(daily[d])}${note}</title></rect>`;
  }
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${HISTORY_WIDTH}" height="${HEIGHT}" viewBox="0 0 ${HISTORY_WIDTH} ${HEIGHT}" ` +
    `role="img" aria-label="${esc(label)}"><title>${esc(label)}</title><style>${STYLE}</style>${cells}</svg>`
  );
}

/**
 * `GET /api/badges/{id}/history.svg`: the status page's 90-day bar of one
 * resource (the same rollups and raw checks, the same incidents per day),
 * with the other badges' visibility and caching (badges.ts).
 */
export function historyBadgeRoute(ctx: DaemonContext) {
  return async (req: IncomingMessage, res: ServerResponse) => {
    const { row, principal, label } = await badgeResource(ctx, req);
    const now = Date.now();
    const [tally, incidents] = await Promise.all([readTally(ctx.db, row.id, now), readIncidents(ctx, row.id, now)]);
    const u = tally ? uptimeOf(tally) : NO_UPTIME;
    const perDay = incidentsPerDay(incidents, now).get(row.id) ?? new Array<number>(BAR_DAYS).fill(0);
    sendBadge(req, res, principal, historySvg(label ?? row.name, u.daily, perDay, u.d90, now));
  };
}
