import type { Summary } from '../summary.ts';
import { esc } from './escape.ts';

/** The form's own rules, appended to the page's stylesheet (44 px targets: WCAG 2.5.5 and Lighthouse's tap targets). */
export const SUBSCRIBE_CSS = `.sub{border:1px solid var(--line);border-radius:8px;padding:.6rem 1rem 1rem;margin-top:2rem;background:var(--card)}
.sub label{display:block;font-weight:600;margin:.4rem 0 .2rem}.sub .row{display:flex;flex-wrap:wrap;gap:.5rem}
.sub input[type=email]{flex:1 1 16rem;min-height:44px;padding:.4rem .6rem;font:inherit;color:var(--fg);background:var(--bg);border:1px solid var(--mut);border-radius:6px}
.sub button{min-height:44px;padding:.4rem 1rem;font:inherit;font-weight:600;color:#fff;background:#0969da;border:0;border-radius:6px;cursor:pointer}
.sub fieldset{border:0;padding:0;margin:.8rem 0 0}.sub legend{font-weight:600;padding:0}
.sub .picks label{display:flex;align-items:center;gap:.5rem;font-weight:400;min-height:44px;margin:0}
.sub .picks input{width:1.2rem;height:1.2rem}.sub .hint{color:var(--mut);margin:.3rem 0 0;font-size:.9rem}
`;

/** Where a page's sign-ups go (on the API listener, and on the page's custom hostname too). */
export const subscribePath = (slug: string) => `/status/${slug}/subscribe`;

/**
 * The subscribe form: a plain HTML form that posts to the daemon (no script,
 * CSP `form-action 'self'`), every field labelled. On the page it offers the
 * page's groups to pick from (a thousand resources would be most of the page's
 * bytes); the form's own page (`GET /status/{slug}/subscribe`, `full`) offers
 * every resource as well. Nothing when the page takes no email sign-ups.
 */
export function subscribeHtml(s: Summary, full = false): string {
  if (!s.page.subscribe.email) return '';
  const pick = (name: string, id: number, label: string) =>
    `<label><input type="checkbox" name="${name}" value="${id}">${esc(label)}</label>`;
  const groups = s.groups.map((g) => pick('group', g.id, g.name));
  const resources = full ? s.groups.flatMap((g) => g.resources.map((r) => pick('resource', r.id, `${r.name} (${g.name})`))) : [];
  // One group is no choice; a page with resources still offers the form's own page to pick them.
  const fieldset =
    groups.length > 1 || full
      ? `<fieldset class="picks"><legend>Only about (optional; none: everything on this page)</legend>${groups.join('')}${resources.join('')}</fieldset>`
      : '';
  const more = full ? '' : `<p class="hint"><a href="${esc(subscribePath(s.page.slug))}">Choose services to follow</a></p>`;
  const picks = fieldset + more;
  return (
    `<section class="sub" aria-labelledby="sub-h"><h2 id="sub-h">Get updates by email</h2>` +
    `<form method="post" action="${esc(subscribePath(s.page.slug))}"><label for="sub-email">Email address</label>` +
    `<div class="row"><input id="sub-email" type="email" name="email" required maxlength="254" autocomplete="email" aria-describedby="sub-hint">` +
    `<button type="submit">Subscribe</button></div>` +
    `<p class="hint" id="sub-hint">We send a link to confirm; nothing else until you click it. Every mail has a one-click unsubscribe.</p>` +
    `${picks}</form></section>`
  );
}
