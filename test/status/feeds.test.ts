import { parseFeed } from '@rowanmanning/feed-parser';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { bearer, expectProblem, fieldsOf, send } from '../helpers/http.ts';
import { type DbHandle, openDb } from '../helpers/test-database.ts';
import { getRaw } from './fetch-raw.ts';
import { DAY, HOUR, useStatusWorld } from './world.ts';

const xml = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  isArray: (name) => ['entry', 'item', 'link'].includes(name),
});

/** Well-formed XML 1.0: fast-xml-parser's check, and no character XML forbids even escaped (which that check lets through). */
function wellFormed(text: string): boolean {
  return XMLValidator.validate(text) === true && !/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/.test(text);
}

interface Posted {
  pageId: number;
  title: string;
  impact: string;
  createdAt: number;
  resolved?: boolean;
  resources: Array<[number, string]>;
  /** Oldest first: [state, message HTML, at]. */
  updates: Array<[string, string, number]>;
}

/**
 * A posted incident written straight into the tables, as the API that posts
 * them would (its state and times those of its last update).
 */
async function post(db: DbHandle, p: Posted): Promise<number> {
  const last = p.updates.at(-1)!;
  const [row] = await db.query<{ id: number }>(
    `INSERT INTO status_incidents (page_id, title, impact, state, source_incident_id, created_at, updated_at, resolved_at)
     VALUES (?, ?, ?, ?, NULL, ?, ?, ?) RETURNING id`,
    p.pageId,
    p.title,
    p.impact,
    last[0],
    p.createdAt,
    last[2],
    last[0] === 'resolved' ? last[2] : null,
  );
  for (const [resourceId, impact] of p.resources) {
    await db.query('INSERT INTO status_incident_resources (incident_id, resource_id, impact) VALUES (?, ?, ?)', row.id, resourceId, impact);
  }
  for (const [state, html, at] of p.updates) {
    await db.query(
      'INSERT INTO status_incident_updates (incident_id, state, message, message_html, automatic, created_at) VALUES (?, ?, ?, ?, 0, ?)',
      row.id,
      state,
      html.replace(/<[^>]+>/g, ''),
      html,
      at,
    );
  }
  return row.id;
}

/**
 * `/status/{slug}/feed.atom` and `/feed.rss` (and on the page's custom
 * hostname): the page's posted incidents as anonymous visitors see them, one
 * entry per incident with its timeline, read back by a real feed parser.
 */
describe('status page feeds', () => {
  const world = useStatusWorld();
  let db: DbHandle;
  const ids: Record<'api' | 'hiddenOnly' | 'old' | 'other', number> = { api: 0, hiddenOnly: 0, old: 0, other: 0 };
  const get = (path: string, headers: Record<string, string> = {}) => getRaw(world().d.url, path, headers);

  beforeAll(async () => {
    const w = world();
    db = await openDb(w.d);
    const now = w.now;
    // Open: web (PUBLIC), wiki (AUTHENTICATED) and vault (HIDDEN); only web may be named in the feed.
    ids.api = await post(db, {
      pageId: w.page.id,
      title: 'Errors on <checkout> & "login"',
      impact: 'major',
      createdAt: now - 2 * HOUR,
      resources: [
        [w.ids.web, 'major'],
        [w.ids.wiki, 'minor'],
        [w.ids.vault, 'critical'],
      ],
      updates: [
        ['investigating', '<p>We are looking into <em>errors</em>.</p>', now - 2 * HOUR],
        ['identified', '<p>A bad deploy; rolling back ]]&gt; now.</p>', now - HOUR],
      ],
    });
    // Resolved, and about the HIDDEN vault only: posted on the page, so in the feed, but naming nothing.
    ids.hiddenOnly = await post(db, {
      pageId: w.page.id,
      title: 'Vault maintenance overran',
      impact: 'minor',
      createdAt: now - 3 * DAY,
      resources: [[w.ids.vault, 'minor']],
      updates: [
        ['investigating', '<p>Slow.</p>', now - 3 * DAY],
        ['resolved', '<p>Done.</p>', now - 3 * DAY + HOUR],
      ],
    });
    ids.old = await post(db, {
      pageId: w.page.id,
      title: 'Long ago',
      impact: 'none',
      createdAt: now - 100 * DAY,
      resources: [[w.ids.web, 'none']],
      updates: [['resolved', '<p>Old.</p>', now - 100 * DAY]],
    });
    const other = await w.d.admin.call(operations.createStatusPage, {
      body: { slug: 'other', title: 'Other', groupIds: [w.groups.website] },
    });
    ids.other = await post(db, {
      pageId: other.id,
      title: 'Only on the other page',
      impact: 'minor',
      createdAt: now - HOUR,
      resources: [[w.ids.web, 'minor']],
      updates: [['investigating', '<p>Other.</p>', now - HOUR]],
    });
  });
  afterAll(() => db?.close());

  it('Atom: well-formed, what RFC 4287 requires, read back by a feed parser', async () => {
    const { d } = world();
    const res = await get('/status/main/feed.atom');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/atom+xml; charset=utf-8');
    expect(wellFormed(res.text)).toBe(true);
    const base = `${d.url}/status/main`;

    // RFC 4287 4.1.1: a feed has an id, a title, an updated and an author (or every entry has one); 4.1.2: each entry an id, a title, an updated.
    const doc = xml.parse(res.text).feed;
    expect(doc['@xmlns']).toBe('http://www.w3.org/2005/Atom');
    expect(doc.id).toBe(base);
    expect(doc.title).toBe('Example Corp status · incidents');
    expect(doc.author.name).toBe('Example Corp status');
    expect(doc.link.find((l: any) => l['@rel'] === 'self')['@href']).toBe(`${base}/feed.atom`);
    expect(doc.entry).toHaveLength(2);
    // Atom titles are type="html" here: the title is escaped inside, so a reader that renders it shows it, not a <checkout> tag.
    expect(doc.entry[0].title).toEqual({ '@type': 'html', '#text': 'Errors on &lt;checkout&gt; &amp; &quot;login&quot; (identified)' });
    for (const e of doc.entry) {
      expect(e.id).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/status\/main\/history#incident-\d+$/);
      expect(String(e.updated['#text'] ?? e.updated)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(e.title['#text'] ?? e.title).toBeTruthy();
    }

    const feed = parseFeed(res.text);
    expect(feed.meta.type).toBe('atom');
    expect(feed.url).toBe(base);
    expect(feed.self).toBe(`${base}/feed.atom`);
    // Most recently updated first; the other page's and the one updated 100 days ago are not in it.
    expect(feed.items.map((i) => i.id)).toEqual([`${base}/history#incident-${ids.api}`, `${base}/history#incident-${ids.hiddenOnly}`]);
    const [open, hidden] = feed.items;
    // The title as posted (escaped for Atom's type="html", read back as the text).
    expect(open.title).toBe('Errors on <checkout> & "login" (identified)');
    expect(open.url).toBe(`${base}/history#incident-${ids.api}`);
    expect(open.updated?.getTime()).toBe(world().now - HOUR);
    expect(open.published?.getTime()).toBe(world().now - 2 * HOUR);
    // The timeline, newest first, and only the public resource named.
    const content = open.content ?? '';
    expect(content).toContain('Affects web (major)');
    expect(content.indexOf('Identified')).toBeLessThan(content.indexOf('Investigating'));
    // A `]]>` in a message does not end the CDATA section early.
    expect(content).toContain('<p>A bad deploy; rolling back ]]> now.</p>');
    expect(content).toContain('<em>errors</em>');
    expect(hidden.title).toBe('Vault maintenance overran (resolved)');
    expect(hidden.content).not.toContain('Affects');
    for (const secret of ['wiki', 'vault', 'critical', 'Only on the other page', 'Long ago']) expect(res.text).not.toContain(secret);
  });

  it('RSS 2.0: well-formed, what the spec requires, read back by a feed parser', async () => {
    const { d } = world();
    const res = await get('/status/main/feed.rss');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/rss+xml; charset=utf-8');
    expect(wellFormed(res.text)).toBe(true);
    const base = `${d.url}/status/main`;
    // RSS 2.0: a channel has a title, a link and a description; an item a title or a description; dates are RFC 822.
    const rss = xml.parse(res.text).rss;
    expect(rss['@version']).toBe('2.0');
    expect(rss.channel.title).toBe('Example Corp status · incidents');
    expect(rss.channel.link).toEqual([base]);
    expect(rss.channel.description).toBe('Live status of our public services');
    expect(rss.channel.item).toHaveLength(2);
    for (const item of rss.channel.item) {
      expect(item.title).toBeTruthy();
      expect(item.guid['#text']).toBe(item.link[0]);
      expect(item.pubDate).toMatch(/^[A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT$/);
    }

    const feed = parseFeed(res.text);
    expect(feed.meta.type).toBe('rss');
    expect(feed.url).toBe(base);
    expect(feed.self).toBe(`${base}/feed.rss`);
    expect(feed.items.map((i) => i.id)).toEqual([`${base}/history#incident-${ids.api}`, `${base}/history#incident-${ids.hiddenOnly}`]);
    const open = feed.items[0];
    expect(open.title).toBe('Errors on <checkout> & "login" (identified)');
    // RSS's one date is the last update's: readers that watch it see the incident change.
    expect(open.published?.getTime()).toBe(Math.floor((world().now - HOUR) / 1000) * 1000);
    expect(open.description).toContain('Affects web (major)');
    for (const secret of ['wiki', 'vault', 'critical', 'Only on the other page', 'Long ago']) expect(res.text).not.toContain(secret);
  });

  it('is the public feed whoever asks, with the page ETag, 304, compression and caching', async () => {
    const { d } = world();
    const anonymous = await get('/status/main/feed.atom');
    // Logged in, an admin still gets the public feed (a feed reader's copy is shared): same bytes, same cache rules.
    const admin = await get('/status/main/feed.atom', bearer(d.adminKey));
    expect(admin.text).toBe(anonymous.text);
    expect(admin.headers.etag).toBe(anonymous.headers.etag);
    expect(admin.headers['cache-control']).toBe('public, max-age=10');
    expect(String(anonymous.headers.vary)).toContain('Accept-Encoding');
    expect(anonymous.headers['x-content-type-options']).toBe('nosniff');

    for (const encoding of ['br', 'gzip']) {
      const res = await get('/status/main/feed.rss', { 'accept-encoding': encoding });
      expect(res.headers['content-encoding']).toBe(encoding);
      expect(res.body.length).toBeLessThan(Buffer.byteLength(res.text));
      expect(res.text).toBe((await get('/status/main/feed.rss')).text);
    }
    const again = await get('/status/main/feed.atom', { 'if-none-match': String(anonymous.headers.etag) });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    expect(again.headers.etag).toBe(anonymous.headers.etag);
    // Rebuilt (an edit of the page that the feed does not show makes a new cache key) from the same rows: the same bytes and
    // ETag, so readers polling with If-None-Match keep getting 304s (no date in the feed comes from the clock).
    const rss = await get('/status/main/feed.rss');
    await d.admin.call(operations.updateStatusPage, { params: { id: world().page.id }, body: { showErrorDetails: true } });
    try {
      for (const before of [anonymous, rss]) {
        const path = before === rss ? '/status/main/feed.rss' : '/status/main/feed.atom';
        const rebuilt = await get(path, { 'if-none-match': String(before.headers.etag) });
        expect(rebuilt.status, path).toBe(304);
      }
    } finally {
      await d.admin.call(operations.updateStatusPage, { params: { id: world().page.id }, body: { showErrorDetails: false } });
    }

    expectProblem(await send(d.url, 'GET', '/status/nope/feed.atom'), 404);
    // The links are made from the Host header (no --public-url here): one that is no host name is refused, naming it.
    expect(
      fieldsOf(expectProblem(await send(d.url, 'GET', '/status/main/feed.rss', { headers: { host: 'evil.example.com/x' } }), 400)),
    ).toEqual(['Host']);
  });

  it("is linked from the page's head, at paths that serve it", async () => {
    const page = (await get('/status/main')).text;
    const head = page.slice(0, page.indexOf('</head>'));
    const links = [...head.matchAll(/<link rel="alternate" type="([^"]+)" title="([^"]+)" href="([^"]+)">/g)].map((m) => m.slice(1));
    expect(links).toEqual([
      ['application/atom+xml', 'Example Corp status · incidents (Atom)', '/status/main/feed.atom'],
      ['application/rss+xml', 'Example Corp status · incidents (RSS)', '/status/main/feed.rss'],
    ]);
    for (const [type, , href] of links) {
      const res = await get(href);
      expect([res.status, res.headers['content-type']]).toEqual([200, `${type}; charset=utf-8`]);
    }
  });

  it('on the custom hostname: /feed.atom, /feed.rss and the linked paths, with that host in the links', async () => {
    const { d, page } = world();
    await d.admin.call(operations.updateStatusPage, { params: { id: page.id }, body: { customHostname: 'status.example.com' } });
    try {
      for (const path of ['/feed.atom', '/feed.rss', '/status/main/feed.atom', '/status/main/feed.rss']) {
        const res = await getRaw(d.edgeUrl, path, { host: 'status.example.com' });
        expect(res.status, path).toBe(200);
        const feed = parseFeed(res.text);
        expect(feed.url, path).toBe('http://status.example.com/');
        expect(feed.self, path).toBe(`http://status.example.com/feed.${path.endsWith('atom') ? 'atom' : 'rss'}`);
        expect(feed.items.map((i) => i.url)).toEqual([
          `http://status.example.com/history#incident-${ids.api}`,
          `http://status.example.com/history#incident-${ids.hiddenOnly}`,
        ]);
        expect(res.text).not.toContain('wiki');
      }
      // Another page's slug, or another host: the routes', not this page's.
      expect((await getRaw(d.edgeUrl, '/status/other/feed.atom', { host: 'status.example.com' })).status).toBe(404);
      expect((await getRaw(d.edgeUrl, '/feed.atom', { host: 'app.example.com' })).status).toBe(404);
    } finally {
      await d.admin.call(operations.updateStatusPage, { params: { id: page.id }, body: { customHostname: null } });
    }
  });
  it('shows an incident posted through the API at once: opened, updated, resolved, deleted', async () => {
    const { d, page, ids: res } = world();
    const entries = async () => parseFeed((await get('/status/main/feed.atom')).text).items;
    expect(await entries()).toHaveLength(2); // cached now: each step below must drop it
    const opened = await d.admin.call(operations.openPostedIncident, {
      params: { id: page.id },
      body: {
        title: 'Checkout slow',
        impact: 'minor',
        resources: [{ id: res.web }],
        state: 'investigating',
        message: '**Slow** checkouts',
      },
    });
    let [first] = await entries();
    expect([first.title, first.content]).toEqual([
      'Checkout slow (investigating)',
      expect.stringContaining('<strong>Investigating</strong>'),
    ]);
    expect(first.content).toContain('<strong>Slow</strong> checkouts');
    await d.admin.call(operations.postIncidentUpdate, {
      params: { id: page.id, incidentId: opened.id },
      body: { state: 'resolved', message: 'Back to normal.\u0001' },
    });
    // A control character that XML does not allow, even escaped, does not make the feed unreadable.
    for (const path of ['/status/main/feed.atom', '/status/main/feed.rss']) {
      const text = (await get(path)).text;
      expect(wellFormed(text), path).toBe(true);
      expect(text, path).toContain('Back to normal.\ufffd');
    }
    [first] = await entries();
    expect(first.title).toBe('Checkout slow (resolved)');
    const content = first.content ?? '';
    expect(content.indexOf('Resolved')).toBeLessThan(content.indexOf('Investigating'));
    await d.admin.call(operations.deletePostedIncident, { params: { id: page.id, incidentId: opened.id } });
    expect((await entries()).map((e) => e.title)).not.toContain('Checkout slow (resolved)');
  });
});
