import type { Posted } from '../posted-read.ts';
import { esc } from './escape.ts';
import { pageCss } from './page-css.ts';
import { cspHash } from './page-script.ts';
import { incidentArticle, POSTED_CSS } from './posted-html.ts';

/**
 * A page's history page: its posted incidents of the last 90 days, newest
 * first, each with its whole timeline. Static HTML: no script (the CSP allows
 * none), the page's stylesheet (light and dark), a link back to the page.
 */
export function renderHistory(
  page: { title: string; description: string | null },
  incidents: Posted[],
  opts: { pagePath: string; favicon: string },
): { html: string; csp: string } {
  const css = pageCss([]) + POSTED_CSS;
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Incident history · ${esc(page.title)}</title><meta name="description" content="Incidents of the last 90 days on ${esc(page.title)}">
<meta name="color-scheme" content="light dark"><link rel="icon" href="${opts.favicon}"><style>${css}</style></head>
<body><div class="wrap"><header><p><a href="${esc(opts.pagePath)}">← ${esc(page.title)}</a></p><h1>Incident history</h1>
<p class="desc">Incidents posted in the last 90 days, newest first.</p></header>
<main>${incidents.length ? incidents.map((i) => incidentArticle(i, 2)).join('') : '<p class="note">No incidents in the last 90 days.</p>'}</main>
<footer><p><a href="${esc(opts.pagePath)}">Current status</a> · monctl</p></footer></div></body></html>`;
  const csp =
    `default-src 'none'; style-src ${cspHash(css)}; img-src http: https: data:; ` +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
  return { html, csp };
}
