import { Feed, type Item } from 'feed';
import { esc, xmlChars } from '../render/escape.ts';
import type { FeedIncident } from './feed-read.ts';

/** Where the feed's links point: the page, its history page and the two feeds, absolute (RSS and Atom want absolute URLs). */
export interface FeedUrls {
  page: string;
  history: string;
  atom: string;
  rss: string;
}

export interface FeedPage {
  title: string;
  description: string | null;
  /** The feed's own `updated` when it has no entry (a rebuilt feed keeps its ETag). */
  updatedAt: number;
}

const STATE_LABEL = { investigating: 'Investigating', identified: 'Identified', monitoring: 'Monitoring', resolved: 'Resolved' } as const;

const stamp = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/**
 * An entry's HTML: the impact and the public resources it affects, then its
 * timeline newest first, each update's state, time and message (already
 * sanitised HTML, as the page shows it): what Statuspage's feeds put in an
 * incident's entry.
 */
function entryHtml(i: FeedIncident): string {
  const affects = i.resources.length ? ` · Affects ${i.resources.map((r) => `${esc(r.name)} (${r.impact})`).join(', ')}` : '';
  const timeline = i.updates.map(
    (u) => `<p><strong>${STATE_LABEL[u.state]}</strong> · <small>${stamp(u.createdAt)}</small></p>${u.messageHtml}`,
  );
  return `<p>Impact: ${i.impact}${affects}</p>${timeline.join('')}`;
}

/**
 * The page's posted incidents as Atom 1.0 or RSS 2.0: one entry per incident
 * (updated with each update, as Statuspage's history feeds do), its id and
 * link the incident's place on the history page. Every date comes from the
 * rows, none from the clock: the same rows make the same bytes and ETag.
 */
export function renderFeed(format: 'atom' | 'rss', page: FeedPage, urls: FeedUrls, incidents: FeedIncident[]): string {
  const updated = incidents.length ? Math.max(...incidents.map((i) => i.updatedAt)) : page.updatedAt;
  const feed = new Feed({
    id: urls.page,
    title: `${page.title} · incidents`,
    description: page.description ?? `Incidents posted on the ${page.title} status page`,
    link: urls.page,
    language: 'en',
    updated: new Date(updated),
    generator: 'monctl',
    feedLinks: { atom: urls.atom, rss: urls.rss },
    author: { name: page.title, link: urls.page },
  });
  for (const i of incidents) {
    const link = `${urls.history}#incident-${i.id}`;
    const html = entryHtml(i);
    const title = `${i.title} (${STATE_LABEL[i.state].toLowerCase()})`;
    const item: Item = {
      // Atom's title is type="html" here (the package's choice): the text is escaped for it; RSS titles are plain text.
      title: format === 'atom' ? esc(title) : title,
      id: link,
      guid: link,
      link,
      date: new Date(i.updatedAt),
      // RSS has one date (pubDate, from `published` when set): the last update's, so readers that watch it see the change.
      ...(format === 'atom' ? { published: new Date(i.createdAt) } : {}),
      category: [{ name: `impact: ${i.impact}`, term: i.impact }],
    };
    // RSS readers read <description>; Atom's is <content> (a <summary> beside it would say it all twice).
    if (format === 'atom') item.content = html;
    else item.description = html;
    feed.addItem(item);
  }
  return xmlChars(format === 'atom' ? feed.atom1() : feed.rss2());
}
