import { Value } from '@sinclair/typebox/value';
import { EventSource } from 'eventsource';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { StatusSummary } from '../../src/api/schemas/status-pages.ts';
import { login, send, until } from '../helpers/http.ts';
import { getRaw } from './fetch-raw.ts';
import { type PostedWorld, seedPosted } from './posted-world.ts';
import { useStatusWorld, USER } from './world.ts';

const titles = (s: any) => s.postedIncidents.map((i: any) => i.title);
const tagOf = (html: string) => /<div id="posts" data-tag="([\w-]+)">/.exec(html)?.[1];

/** What readers see of posted incidents and maintenance notices: the summary per audience, the page, the history page, the stream. */
describe('status page: posted incidents', () => {
  const world = useStatusWorld();
  let p: PostedWorld;
  beforeAll(async () => {
    p = await seedPosted(world());
  }, 60_000);
  afterAll(() => p?.posts.close());

  const summaryOf = async (headers: Record<string, string> = {}) => {
    const res = await send(world().d.url, 'GET', '/api/status-pages/main/summary', { headers });
    expect(res.status, res.text).toBe(200);
    const body = res.json();
    expect([...Value.Errors(StatusSummary, body)].map((e) => `${e.path} ${e.message}`)).toEqual([]);
    return body;
  };

  it('lists open incidents first, then those resolved in 14 days, with the resources each audience may see', async () => {
    const { d, ids } = world();
    const anonymous = await summaryOf();
    expect(titles(anonymous)).toEqual(['Internal VPN slow', 'Checkout errors', 'Login delays']);
    const checkout = anonymous.postedIncidents[1];
    expect(checkout).toMatchObject({ impact: 'major', state: 'identified', resolvedAt: null });
    // wiki (AUTHENTICATED) and vault (HIDDEN) are left out for anonymous readers.
    expect(checkout.resources).toEqual([{ id: ids.web, name: 'web', impact: 'major' }]);
    expect(checkout.updates.map((u: any) => u.state)).toEqual(['identified', 'investigating']);
    expect(checkout.updates[0].messageHtml).toContain('<strong>the cause</strong>');
    // Every resource hidden: still on the page, with its title and timeline.
    expect(anonymous.postedIncidents[0].resources).toEqual([]);
    expect(anonymous.postedIncidents[0].updates).toHaveLength(1);

    const { jar } = await login(d.url, USER.username, USER.password);
    const session = await summaryOf(jar.header());
    expect(titles(session)).toEqual(titles(anonymous));
    expect(session.postedIncidents[1].resources.map((r: any) => r.name)).toEqual(['web', 'wiki']);
    const html = (await getRaw(d.url, '/status/main')).text;
    expect(html).not.toMatch(/\b(wiki|vault)\b/);
  });

  it('shows them on the page: open ones with their timeline, impact and state, then notices, then resolved ones folded', async () => {
    const html = (await getRaw(world().d.url, '/status/main')).text;
    const at = (text: string) => {
      const i = html.indexOf(text);
      expect(i, text).toBeGreaterThan(-1);
      return i;
    };
    // Open ones before the automatic parts of the page (banner first, then posts, announcements, maintenance, groups).
    expect(at('Current incidents')).toBeLessThan(at('Internal VPN slow'));
    expect(at('Internal VPN slow')).toBeLessThan(at('Checkout errors'));
    expect(at('Checkout errors')).toBeLessThan(at('Scheduled maintenance'));
    expect(at('Scheduled maintenance')).toBeLessThan(at('Resolved incidents'));
    expect(at('Resolved incidents')).toBeLessThan(at('Login delays'));
    expect(at('Login delays')).toBeLessThan(at('class="ann '));
    expect(html).toMatch(
      /<h3 id="p\d+">Checkout errors<\/h3><p class="meta"><span class="tag open">Identified<\/span><span class="tag">Major impact<\/span>/,
    );
    expect(html).toContain('Affects <b>web</b>.');
    expect(html).toMatch(
      /<ol class="tl" aria-label="Updates to Checkout errors, newest first"><li><p><b>Identified<\/b> · <time datetime="[\dT:-]+">/,
    );
    expect(html).toContain('<div class="msg"><p>We found <strong>the cause</strong>');
    expect(html).toMatch(
      /<details class="pi i-minor"><summary><b>Login delays<\/b><\/summary><p class="meta"><span class="tag ok">Resolved<\/span>/,
    );
    // Notices: in progress and upcoming; one whose window is over is gone. Older incidents are on the history page only.
    expect(html).toMatch(/CDN upgrade under way<\/h3><p class="meta"><span class="tag now">In progress<\/span>/);
    expect(html).toMatch(/Failover drill on Saturday<\/h3><p class="meta"><span class="tag">Scheduled<\/span>/);
    expect(html).toContain('Images may load <em>slowly</em>.');
    for (const absent of ['Finished work', 'Storage outage', 'Ancient outage']) expect(html).not.toContain(absent);
    expect(html).toContain('<a href="/status/main/history">Incident history</a>');
  });

  it('serves the history page: the last 90 days, newest first, no script, cached and compressed like the page', async () => {
    const { d } = world();
    const res = await getRaw(d.url, '/status/main/history', { 'accept-encoding': 'br' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-encoding']).toBe('br');
    expect(res.headers['cache-control']).toBe('public, max-age=10');
    expect(String(res.headers['content-security-policy'])).not.toContain('script-src');
    expect(res.text).not.toContain('<script');
    const order = ['Internal VPN slow', 'Checkout errors', 'Login delays', 'Storage outage'].map((t) => res.text.indexOf(`>${t}</h2>`));
    expect(
      order.every((i, n) => i > 0 && (n === 0 || i > order[n - 1])),
      String(order),
    ).toBe(true);
    expect(res.text).not.toContain('Ancient outage');
    expect(res.text).not.toMatch(/\b(wiki|vault)\b/);
    expect(res.text).toContain('<a href="/status/main">');
    const again = await getRaw(d.url, '/status/main/history', { 'if-none-match': String(res.headers.etag) });
    expect(again.status).toBe(304);
    const { jar } = await login(d.url, USER.username, USER.password);
    const mine = await getRaw(d.url, '/status/main/history', jar.header());
    expect(mine.headers['cache-control']).toBe('private, no-cache');
    expect(mine.text).toContain('<b>wiki</b>');
    expect((await send(d.url, 'GET', '/status/nope/history')).status).toBe(404);
  });

  it('serves the history at /history on the custom hostname, linked from the page there', async () => {
    const { d, page } = world();
    await d.admin.call(operations.updateStatusPage, { params: { id: page.id }, body: { customHostname: 'status.example.com' } });
    try {
      const host = { host: 'status.example.com' };
      const onEdge = await getRaw(d.edgeUrl, '/', host);
      expect(onEdge.text).toContain('<a href="/history">Incident history</a>');
      const history = await getRaw(d.edgeUrl, '/history', host);
      expect(history.status).toBe(200);
      expect(history.text).toContain('>Storage outage</h2>');
      expect(history.text).toContain('<a href="/">');
    } finally {
      await d.admin.call(operations.updateStatusPage, { params: { id: page.id }, body: { customHostname: null } });
    }
  });

  it('tells live readers of each step (open, update, resolve through the API): the stream names the new tag, the page has it', async () => {
    const { d, ids, page } = world();
    const frames: Array<{ kind: string; data: any }> = [];
    const source = new EventSource(`${d.url}/api/status-pages/main/events`);
    for (const kind of ['SNAPSHOT', 'PAGE_CHANGED'])
      source.addEventListener(kind, (e) => frames.push({ kind, data: JSON.parse((e as MessageEvent).data) }));
    try {
      await until(() => frames.length > 0);
      let tag = tagOf((await getRaw(d.url, '/status/main')).text);
      expect(frames[0].data.posts).toBe(tag);
      /** After a step: a PAGE_CHANGED with a new tag, and the page (fetched now, as the page script does) under that tag. */
      const step = async (shown: RegExp) => {
        const seen = frames.length;
        await until(() => frames.slice(seen).some((f) => f.kind === 'PAGE_CHANGED' && f.data.posts && f.data.posts !== tag));
        tag = frames.findLast((f) => f.data.posts)!.data.posts;
        const html = (await getRaw(d.url, '/status/main')).text;
        expect(tagOf(html)).toBe(tag);
        expect(html).toMatch(shown);
      };
      const opened = await d.admin.call(operations.openPostedIncident, {
        params: { id: page.id },
        body: {
          title: 'Search is down',
          impact: 'critical',
          resources: [{ id: ids.api }],
          state: 'investigating',
          message: 'Looking into it.',
        },
      });
      await step(
        /<h3 id="p\d+">Search is down<\/h3><p class="meta"><span class="tag open">Investigating<\/span><span class="tag">Critical impact/,
      );
      const at = { id: page.id, incidentId: opened.id };
      await d.admin.call(operations.postIncidentUpdate, { params: at, body: { state: 'monitoring', message: 'A fix is *out*.' } });
      await step(/Search is down<\/h3><p class="meta"><span class="tag now">Monitoring<\/span>[\s\S]*<em>out<\/em>/);
      await d.admin.call(operations.postIncidentUpdate, { params: at, body: { state: 'resolved', message: 'Search works again.' } });
      await step(/<summary><b>Search is down<\/b><\/summary><p class="meta"><span class="tag ok">Resolved/);
    } finally {
      source.close();
    }
  });
});
