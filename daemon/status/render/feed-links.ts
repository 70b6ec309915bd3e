import type { Summary } from '../summary.ts';

/** The page's <link rel=alternate> to its Atom and RSS feeds (the feeds work fills this in). */
export function feedLinks(_s: Summary): string {
  return '';
}
