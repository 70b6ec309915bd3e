import type { Summary } from '../summary.ts';
import { esc } from './escape.ts';

/**
 * The page's `<link rel=alternate>` to its Atom and RSS feeds, so that
 * browsers and feed readers find them from the page's address. Paths, not
 * URLs: the same HTML is served on the API listener and on a custom
 * hostname, and both serve the feeds at these paths.
 */
export function feedLinks(s: Summary): string {
  const title = esc(`${s.page.title} · incidents`);
  return (
    `<link rel="alternate" type="application/atom+xml" title="${title} (Atom)" href="${esc(s.page.feeds.atom)}">` +
    `<link rel="alternate" type="application/rss+xml" title="${title} (RSS)" href="${esc(s.page.feeds.rss)}">`
  );
}
