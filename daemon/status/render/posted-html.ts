import { createHash } from 'node:crypto';
import type { Notice, Posted } from '../posted-read.ts';
import type { Summary } from '../summary.ts';
import { esc, when } from './escape.ts';

const IMPACT: Record<Posted['impact'], string> = {
  none: 'No impact',
  minor: 'Minor impact',
  major: 'Major impact',
  critical: 'Critical impact',
};
const STATE: Record<Posted['state'], string> = {
  investigating: 'Investigating',
  identified: 'Identified',
  monitoring: 'Monitoring',
  resolved: 'Resolved',
};
/** A state's tag colours: the existing pairs of the page's stylesheet, which pass WCAG AA in both schemes. */
const STATE_CLASS: Record<Posted['state'], string> = { investigating: 'open', identified: 'open', monitoring: 'now', resolved: 'ok' };

/** Styles of posted incidents and notices (appended to the page's stylesheet; the history page uses them too). */
export const POSTED_CSS =
  '.pi{border:1px solid var(--line);border-left:6px solid var(--mut);border-radius:6px;padding:.6rem 1rem;margin:.6rem 0;background:var(--card)}' +
  '.pi.i-minor{border-left-color:var(--b)}.pi.i-major{border-left-color:#bc4c00}.pi.i-critical{border-left-color:var(--c)}.pi.mt{border-left-color:var(--maint-fg)}' +
  '.pi h2,.pi h3{font-size:1.05rem;margin:0}.pi .meta{margin:.3rem 0;font-size:.9rem}.pi summary{cursor:pointer}' +
  '.tl{margin:.4rem 0 0;padding:0 0 0 .8rem;border-left:2px solid var(--line)}.tl li{margin:.5rem 0}.tl p,.msg p{margin:.15rem 0}' +
  '.msg img{max-width:100%;height:auto}.tag.ok{background:var(--up-bg);color:var(--up-fg)}\n';

/** The incident's resources this audience sees, with their impact. */
function affects(i: Posted): string {
  if (i.resources.length === 0) return '';
  return ` Affects ${i.resources.map((r) => `<b>${esc(r.name)}</b>${r.impact === i.impact ? '' : ` (${IMPACT[r.impact].toLowerCase()})`}`).join(', ')}.`;
}

/** The timeline, newest first: each update's state, time and sanitised message. */
function timeline(i: Posted): string {
  const items = i.updates.map(
    (u) =>
      `<li><p><b>${STATE[u.state]}</b> · <time datetime="${u.createdAt}">${when(u.createdAt)}</time>${u.automatic ? ' <span class="note">(automatic)</span>' : ''}</p>` +
      `<div class="msg">${u.messageHtml}</div></li>`,
  );
  return items.length ? `<ol class="tl" aria-label="Updates to ${esc(i.title)}, newest first">${items.join('')}</ol>` : '';
}

function meta(i: Posted): string {
  const span = i.resolvedAt ? `${when(i.createdAt)} – ${when(i.resolvedAt)}` : `since ${when(i.createdAt)}`;
  return (
    `<p class="meta"><span class="tag ${STATE_CLASS[i.state]}">${STATE[i.state]}</span><span class="tag">${IMPACT[i.impact]}</span>` +
    `${span}.${affects(i)}</p>`
  );
}

/** One incident with its whole timeline, under a heading of `level` (the history page uses h2, the page h3). */
export function incidentArticle(i: Posted, level: 2 | 3): string {
  return (
    `<article class="pi i-${i.impact}" aria-labelledby="p${i.id}"><h${level} id="p${i.id}">${esc(i.title)}</h${level}>` +
    `${meta(i)}${timeline(i)}</article>`
  );
}

/** A resolved incident on the page: its title and outcome, the timeline folded (a <details>, which needs no script). */
function resolvedItem(i: Posted): string {
  return `<details class="pi i-${i.impact}"><summary><b>${esc(i.title)}</b></summary>${meta(i)}${timeline(i)}</details>`;
}

function notice(n: Notice): string {
  return (
    `<article class="pi mt" aria-labelledby="n${n.id}"><h3 id="n${n.id}">${esc(n.title)}</h3>` +
    `<p class="meta"><span class="tag${n.inProgress ? ' now' : ''}">${n.inProgress ? 'In progress' : 'Scheduled'}</span>` +
    `${when(n.startsAt)} – ${when(n.endsAt)}</p><div class="msg">${n.messageHtml}</div></article>`
  );
}

/**
 * The posted part of the page as HTML, and its tag (a digest of that HTML):
 * the live stream sends the tag, and a page whose tag differs fetches itself
 * again and swaps this part in. Open incidents first with their timelines,
 * then maintenance notices, then incidents resolved recently.
 */
export function postsPart(posted: Posted[], notices: Notice[]): { html: string; tag: string } {
  const open = posted.filter((i) => i.resolvedAt === null);
  const resolved = posted.filter((i) => i.resolvedAt !== null);
  let html = '';
  if (open.length)
    html += `<section aria-labelledby="pio"><h2 id="pio">Current incidents</h2>${open.map((i) => incidentArticle(i, 3)).join('')}</section>`;
  if (notices.length)
    html += `<section aria-labelledby="pin"><h2 id="pin">Scheduled maintenance</h2>${notices.map(notice).join('')}</section>`;
  if (resolved.length)
    html += `<section aria-labelledby="pir"><h2 id="pir">Resolved incidents</h2>${resolved.map(resolvedItem).join('')}</section>`;
  return { html, tag: createHash('sha1').update(html).digest('base64url').slice(0, 16) };
}

/** Posted incidents and maintenance notices, in a container the page script can replace, and a live region that says so. */
export function postedIncidentsHtml(s: Summary): string {
  const { html, tag } = postsPart(s.postedIncidents, s.maintenance.notices);
  return `<p id="posts-said" class="sr" role="status"></p><div id="posts" data-tag="${tag}">${html}</div>`;
}
