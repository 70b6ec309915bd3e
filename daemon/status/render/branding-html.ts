import type { Summary } from '../summary.ts';
import { esc } from './escape.ts';

/**
 * The header's logo and link. The logo is 48 px high with its own width,
 * on a row of its own with the link at its end, so its loading moves nothing
 * else (no layout shift). Its alt text names the page: it stands for it.
 */
export function brandingHeader(s: Summary): string {
  const { logoUrl, headerLink, title } = s.page;
  if (!logoUrl && !headerLink) return '';
  const logo = logoUrl ? `<img class="logo" src="${esc(logoUrl)}" alt="${esc(title)} logo" height="48">` : '';
  const link = headerLink ? `<a class="hl" href="${esc(headerLink.url)}">${esc(headerLink.text)}</a>` : '';
  return `<div class="brand">${logo}${link}</div>`;
}

/**
 * CSS that applies the page's accent colour (appended to the page's
 * stylesheet): links in the light scheme, the header's rule and the header
 * link's fill (white text) in both. Why no more, and the contrast checks it
 * passed, in daemon/status/branding/contrast.ts.
 */
export function brandingCss(s: Summary): string {
  const { accentColor, logoUrl, headerLink } = s.page;
  if (!accentColor && !logoUrl && !headerLink) return '';
  const layout =
    '.brand{display:flex;align-items:center;gap:.5rem 1rem;flex-wrap:wrap;min-height:48px;padding-bottom:.5rem;border-bottom:3px solid var(--accent,var(--line))}' +
    '.logo{display:block;height:48px;width:auto;max-width:100%}.hl{margin-left:auto;padding:.35rem .8rem;border-radius:6px;font-weight:600}' +
    '.hl:focus-visible{outline:2px solid var(--fg);outline-offset:2px}';
  if (!accentColor) return layout;
  return `${layout}:root{--accent:${accentColor}}@media not (prefers-color-scheme:dark){:root{--link:${accentColor}}}.hl{background:var(--accent);color:#fff;text-decoration:none}`;
}
