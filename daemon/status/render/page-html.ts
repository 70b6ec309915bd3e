import type { Summary } from '../summary.ts';
import { shownStatus } from '../live-state.ts';
import { duration, esc, pct, shortDate, when } from './escape.ts';
import { brandingCss, brandingHeader } from './branding-html.ts';
import { feedLinks } from './feed-links.ts';
import { pageCss } from './page-css.ts';
import { POSTED_CSS, postedIncidentsHtml } from './posted-html.ts';
import { SUBSCRIBE_CSS, subscribeHtml } from './subscribe-html.ts';
import { cspHash, PAGE_SCRIPT, SCRIPT_HASH } from './page-script.ts';

type Resource = Summary['groups'][number]['resources'][number];

/** The favicon, inline (no request, no 404 in the console; the CSP allows data: images): a pulse line on a blue tile. */
export const FAVICON =
  'data:image/svg+xml,' +
  encodeURIComponent(
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#0969da"/>' +
      '<path d="M4 17h6l3-8 5 15 3-7h7" fill="none" stroke="#fff" stroke-width="3" stroke-linecap="round" stroke-linejoin="round"/></svg>',
  );

const KIND_LABEL = { INFORMATION: 'Information', WARNING: 'Warning', PROBLEM: 'Problem' } as const;

/** The `Updated …` line of the banner (the stream sends the same text with each change). */
export function updatedText(generatedAt: string, zone = process.env.TZ || 'UTC'): string {
  return `${when(generatedAt)} ${zone}`;
}

/**
 * One day of the bar. A day at 100 % without incidents is `<i></i>` (its
 * date and figure come from the stylesheet on hover); any other day with
 * checks or incidents says its figure in `aria-label` and can be focused.
 */
function day(date: string, uptime: number | null, incidents: number): string {
  if (incidents === 0 && uptime === 100) return '<i></i>';
  if (incidents === 0 && uptime === null) return '<i class="n"></i>';
  const level = uptime === null ? 'n' : uptime >= 100 ? '' : uptime >= 99 ? 'a' : uptime >= 95 ? 'b' : 'c';
  const figure = uptime === null ? 'no data' : pct(uptime);
  const note = incidents ? `, ${incidents} incident${incidents > 1 ? 's' : ''}` : '';
  return `<i${level ? ` class="${level}"` : ''} tabindex="0" role="img" aria-label="${shortDate(date)}: ${figure}${note}"></i>`;
}

function resource(r: Resource, days: string[]): string {
  const s = shownStatus(r);
  let bar = '';
  for (let i = 0; i < days.length; i++) bar += day(days[i], r.daily[i], r.dailyIncidents[i]);
  return (
    `<li class="res" id="r${r.id}"><div class="top"><span class="nm">${esc(r.name)}</span><span class="st ${s.key}">${s.label}</span></div>` +
    `<div class="bar" role="group" aria-label="${esc(r.name)}: uptime per day">${bar}</div>` +
    '<div class="ax" aria-hidden="true"><span class="d90">90 days ago</span><span class="d30">30 days ago</span><span>Today</span></div>' +
    `<div class="fig"><span>24 h <b>${pct(r.uptime.h24)}</b></span><span>30 days <b>${pct(r.uptime.d30)}</b></span>` +
    `<span>90 days <b>${pct(r.uptime.d90)}</b></span></div></li>`
  );
}

function maintenance(s: Summary): string {
  const windows = [...s.maintenance.active.map((w) => ({ w, now: true })), ...s.maintenance.upcoming.map((w) => ({ w, now: false }))];
  if (windows.length === 0) return '';
  const names = new Map(s.groups.flatMap((g) => g.resources.map((r) => [r.id, r.name] as const)));
  const items = windows.map(
    ({ w, now }) =>
      `<li><span class="tag${now ? ' now' : ''}">${now ? 'In progress' : 'Scheduled'}</span>` +
      `<b>${esc(w.name)}</b> · ${when(w.startsAt)} – ${when(w.endsAt)}<br><span class="note">Affects ${esc(w.resourceIds.map((id) => names.get(id) ?? `#${id}`).join(', '))}</span></li>`,
  );
  return `<section aria-labelledby="mt"><h2 id="mt">Maintenance</h2><ul class="list">${items.join('')}</ul></section>`;
}

function incidents(s: Summary, shown: boolean): string {
  if (!shown) return '';
  const items = s.incidents.map(
    (i) =>
      `<li><span class="tag${i.resolvedAt ? '' : ' open'}">${i.resolvedAt ? 'Resolved' : 'Ongoing'}</span>` +
      `<b>${esc(i.resourceName)}</b>${i.cause ? ` · ${esc(i.cause)}` : ''}${i.maintenance ? ' (during maintenance)' : ''}<br>` +
      `<span class="note">${when(i.openedAt)}${i.resolvedAt ? ` – ${when(i.resolvedAt)}` : ''} · ${duration(i.durationSeconds)}</span></li>`,
  );
  return `<section aria-labelledby="inc"><h2 id="inc">Recent incidents</h2>${
    items.length ? `<ul class="list">${items.join('')}</ul>` : '<p class="note">No incidents in the last 14 days.</p>'
  }</section>`;
}

/**
 * The whole status page: server-rendered HTML that is complete without
 * JavaScript. Returns the HTML and its CSP (the inline style and script are
 * allowed by their hashes).
 */
export function renderPage(
  s: Summary,
  opts: { eventsPath: string; showIncidents: boolean; zone?: string; historyPath?: string },
): { html: string; csp: string } {
  const css = pageCss(s.days) + POSTED_CSS + brandingCss(s) + (s.page.subscribe.email ? SUBSCRIBE_CSS : '');
  const history = opts.historyPath ?? `/status/${s.page.slug}/history`;
  const anns = s.announcements.map(
    (a) => `<article class="ann ${a.kind.toLowerCase()}"><p class="kind">${KIND_LABEL[a.kind]}</p>${a.content}</article>`,
  );
  const groups = s.groups
    .filter((g) => g.resources.length > 0)
    .map(
      (g) =>
        `<section class="group" aria-labelledby="g${g.id}"><h2 id="g${g.id}">${esc(g.name)}</h2>` +
        `<ul>${g.resources.map((r) => resource(r, s.days)).join('')}</ul></section>`,
    );
  const html =
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(s.page.title)} · status</title><meta name="description" content="${esc(s.page.description ?? `Current status of ${s.page.title}`)}">
<meta name="color-scheme" content="light dark"><link rel="icon" href="${s.page.faviconUrl ? esc(s.page.faviconUrl) : FAVICON}">${feedLinks(s)}<noscript><meta http-equiv="refresh" content="60"></noscript><style>${css}</style></head>
<body data-events="${esc(opts.eventsPath)}"><div class="wrap"><header>${brandingHeader(s)}<h1>${esc(s.page.title)}</h1>${s.page.description ? `<p class="desc">${esc(s.page.description)}</p>` : ''}</header>
<main><section id="overall" class="banner ${s.overall.state.toLowerCase()}" aria-live="polite"><h2 id="overall-label">${s.overall.label}</h2>` +
    `<p>Updated <span id="updated">${updatedText(s.generatedAt, opts.zone)}</span></p></section>
${postedIncidentsHtml(s)}${anns.length ? `<section aria-label="Announcements">${anns.join('')}</section>` : ''}${maintenance(s)}
${groups.length ? groups.join('\n') : '<p class="note">Nothing to show here.</p>'}
${incidents(s, opts.showIncidents)}${subscribeHtml(s)}</main>
<footer>${s.page.footer ? `<p>${esc(s.page.footer)}</p>` : ''}<p><a href="${esc(history)}">Incident history</a> · Also as <a href="/api/status-pages/${esc(s.page.slug)}/summary">JSON</a> · monctl</p></footer></div>
<script>${PAGE_SCRIPT}</script></body></html>`;
  const csp =
    `default-src 'none'; style-src ${cspHash(css)}; script-src ${SCRIPT_HASH}; connect-src 'self'; img-src 'self' http: https: data:; ` +
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
  return { html, csp };
}
