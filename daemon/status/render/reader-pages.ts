import { esc } from './escape.ts';
import { pageCss } from './page-css.ts';
import { cspHash } from './page-script.ts';
import { SUBSCRIBE_CSS } from './subscribe-html.ts';

const CSS = pageCss([]) + SUBSCRIBE_CSS;
/** No script at all; the only form posts back to this origin. */
export const READER_CSP = `default-src 'none'; style-src ${cspHash(CSS)}; base-uri 'none'; form-action 'self'; frame-ancestors 'none'`;

/** A small page of the sign-up flow (the form, "check your inbox", confirm, unsubscribe), styled as the status page. */
export function readerPage(pageTitle: string, pagePath: string, heading: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(heading)} · ${esc(pageTitle)}</title><meta name="description" content="${esc(heading)}: ${esc(pageTitle)} status updates">
<meta name="color-scheme" content="light dark"><meta name="robots" content="noindex"><style>${CSS}</style></head>
<body><div class="wrap"><header><p><a href="${esc(pagePath)}">${esc(pageTitle)} status</a></p></header>
<main><h1>${esc(heading)}</h1>${body}</main></div></body></html>`;
}

/** A page with one button that POSTs to `action`: mail scanners fetch links, but do not press buttons. */
export function buttonForm(action: string, label: string, hidden: Record<string, string> = {}): string {
  const fields = Object.entries(hidden).map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v)}">`);
  return `<form class="sub" method="post" action="${esc(action)}">${fields.join('')}<button type="submit">${esc(label)}</button></form>`;
}
