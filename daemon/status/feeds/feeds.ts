import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { invalidField, notFound } from '../../../src/errors.ts';
import type { PageRow } from '../live-state.ts';
import { Representation, TimedCache } from '../page-cache.ts';
import { sendRepresentation } from '../serve.ts';
import type { StatusState } from '../state.ts';
import { readFeedIncidents } from './feed-read.ts';
import { type FeedUrls, renderFeed } from './feed-xml.ts';

export type FeedFormat = 'atom' | 'rss';

const CONTENT_TYPE: Record<FeedFormat, string> = {
  atom: 'application/atom+xml; charset=utf-8',
  rss: 'application/rss+xml; charset=utf-8',
};

/** As the page's views: served from memory for 10 s at most, dropped at once when the page's posts change. */
const FEED_MAX_AGE_MS = 10_000;
/** Pages × formats × base URLs (one per page with --public-url or a custom hostname; else per Host, which a client picks). */
const FEED_CAPACITY = 128;

/** `host[:port]`, a name or an IPv6 literal: a Host header that can go into a URL as it is. */
const HOST = /^(?:[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?|\[[0-9a-f:.]{2,45}\])(?::\d{1,5})?$/i;

const schemeOf = (req: IncomingMessage) => ((req.socket as TLSSocket).encrypted ? 'https' : 'http');

/**
 * A page's Atom and RSS feeds (docs/API.md#feeds): its posted incidents as
 * anonymous visitors see them, whoever asks (a feed reader shares what it
 * fetched; a logged-in reader's feed would leak into it), with the page's
 * ETag, compression and caching (daemon/status/serve.ts).
 */
export class StatusFeeds {
  readonly #state: StatusState;
  readonly #cache = new TimedCache<Representation>(FEED_MAX_AGE_MS, FEED_CAPACITY);
  readonly #drop = () => this.#cache.invalidateAll();

  constructor(state: StatusState) {
    this.#state = state;
  }

  start(): void {
    const { bus } = this.#state.ctx;
    // A post changed, or a resource's name, groups or visibility: what an entry names may differ.
    bus.on('status.posts.changed', this.#drop);
    bus.on('resource.changed', this.#drop);
    bus.on('resource.deleted', this.#drop);
  }

  stop(): void {
    const { bus } = this.#state.ctx;
    bus.off('status.posts.changed', this.#drop);
    bus.off('resource.changed', this.#drop);
    bus.off('resource.deleted', this.#drop);
  }

  /** `GET /status/{slug}/feed.atom|feed.rss` on the API listener: links under --public-url, else under the request's Host. */
  async serveApi(req: IncomingMessage, res: ServerResponse, page: PageRow | undefined, format: FeedFormat): Promise<void> {
    if (!page) throw notFound('No such status page');
    let base = this.#state.ctx.config.publicUrl;
    if (!base) {
      const host = req.headers.host ?? (req.headers[':authority'] as string | undefined) ?? '';
      if (!HOST.test(host)) throw invalidField('Host', 'must be a host name or address, with an optional port');
      base = `${schemeOf(req)}://${host.toLowerCase()}`;
    }
    const path = `${base}/status/${page.slug}`;
    await this.#send(req, res, page, format, {
      page: path,
      history: `${path}/history`,
      atom: `${path}/feed.atom`,
      rss: `${path}/feed.rss`,
    });
  }

  /** `GET /feed.atom|/feed.rss` (and the /status/{slug}/ paths) on the page's custom hostname on the edge listener. */
  serveEdge(req: IncomingMessage, res: ServerResponse, page: PageRow, format: FeedFormat): Promise<void> {
    const secure = schemeOf(req) === 'https' || page.https_redirect === 1;
    const base = `${secure ? 'https' : 'http'}://${page.custom_hostname}`;
    return this.#send(req, res, page, format, {
      page: `${base}/`,
      history: `${base}/history`,
      atom: `${base}/feed.atom`,
      rss: `${base}/feed.rss`,
    });
  }

  async #send(req: IncomingMessage, res: ServerResponse, page: PageRow, format: FeedFormat, urls: FeedUrls): Promise<void> {
    const rep = await this.#cache.get(`${page.id}:${page.updated_at}:${format}:${urls.page}`, async () => {
      // The resources the page shows anonymous visitors: an entry names those and no other.
      const view = await this.#state.view(page, 'anonymous');
      const shown = new Map(view.summary.groups.flatMap((g) => g.resources.map((r) => [r.id, r.name] as const)));
      const incidents = await readFeedIncidents(this.#state.ctx, page, shown);
      return new Representation(
        renderFeed(format, { title: page.title, description: page.description, updatedAt: page.updated_at }, urls, incidents),
      );
    });
    await sendRepresentation(req, res, rep, 'anonymous', { 'Content-Type': CONTENT_TYPE[format] });
  }
}
