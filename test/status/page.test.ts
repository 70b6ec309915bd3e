import { createHash } from 'node:crypto';
import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import { StatusSummary } from '../../src/api/schemas/status-pages.ts';
import { login, send } from '../helpers/http.ts';
import { getRaw } from './fetch-raw.ts';
import { DAY, useStatusWorld, USER } from './world.ts';

const sha = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
const inline = (html: string, tag: string) => new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`).exec(html)![1];

/** The page over HTTP: what each visitor sees, the figures, and the headers (the browser tests are in browser.test.ts). */
describe('status page: content and HTTP', () => {
  const world = useStatusWorld();
  const summaryOf = async (headers: Record<string, string> = {}) => {
    const res = await send(world().d.url, 'GET', '/api/status-pages/main/summary', { headers });
    expect(res.status, res.text).toBe(200);
    const body = res.json();
    expect([...Value.Errors(StatusSummary, body)].map((e) => `${e.path} ${e.message}`)).toEqual([]);
    return body;
  };
  const names = (s: any) => s.groups.map((g: any) => [g.name, g.resources.map((r: any) => r.name)]);

  it('shows anonymous visitors the PUBLIC group only; a session or an API key also AUTHENTICATED; HIDDEN never', async () => {
    const { d } = world();
    const anonymous = await summaryOf();
    expect(names(anonymous)).toEqual([['Website', ['api', 'cdn', 'web']]]);
    expect(anonymous.overall).toEqual({ state: 'MAINTENANCE', label: 'Maintenance in progress' });
    const html = (await getRaw(d.url, '/status/main')).text;
    for (const hidden of ['wiki', 'vault', 'Secret', 'Internal tools', 'Database failover drill']) expect(html).not.toContain(hidden);

    const { jar } = await login(d.url, USER.username, USER.password);
    const session = await summaryOf(jar.header());
    expect(names(session)).toEqual([
      ['Website', ['api', 'cdn', 'web']],
      ['Internal tools', ['ci', 'wiki']],
    ]);
    expect(session.overall.state).toBe('PARTIAL_OUTAGE');
    const sessionHtml = (await getRaw(d.url, '/status/main', jar.header())).text;
    expect(sessionHtml).toContain('Internal tools');
    expect(sessionHtml).not.toMatch(/vault|Secret/);
    // ADMIN is a logged-in visitor too: HIDDEN stays hidden on public views.
    expect(names(await summaryOf({ authorization: `Bearer ${d.adminKey}` }))).toEqual(names(session));
  });

  it('shows active announcements by kind, uptime from the rollups, incidents and maintenance', async () => {
    const { d, ids, now } = world();
    const s = await summaryOf();
    expect(s.announcements.map((a: any) => a.kind)).toEqual(['PROBLEM', 'WARNING', 'INFORMATION']);
    const html = (await getRaw(d.url, '/status/main')).text;
    for (const kind of ['information', 'warning', 'problem']) expect(html).toContain(`<article class="ann ${kind}">`);
    expect(html).toContain('<p>Slow <b>builds</b> today</p>');
    expect(html).not.toContain('An old problem');

    const web = s.groups[0].resources.find((r: any) => r.id === ids.web);
    expect(web.uptime.h24).toBeCloseTo(((23 * 60 + 30) / (24 * 60)) * 100, 2);
    expect(s.days).toHaveLength(90);
    expect(s.days[89]).toBe(new Date(Math.floor(now / DAY) * DAY).toISOString().slice(0, 10));
    expect(web.daily[89 - 10]).toBeCloseTo((1400 / 1440) * 100, 2);
    expect(web.daily[89 - 3]).toBeCloseTo((1433 / 1440) * 100, 2);
    expect(web.daily[89 - 61]).toBeNull();
    expect(web.dailyIncidents[89 - 10]).toBe(1);
    // 30 and 90 days: whole days from daily rollups (today from its hourly ones).
    const today = Math.floor(now / DAY) * DAY;
    const todayHours = Array.from({ length: 24 }, (_, i) => i + 1).filter(
      (ago) => Math.floor(now / 3_600_000) * 3_600_000 - ago * 3_600_000 >= today,
    );
    const todayChecks = todayHours.length * 60;
    const todayAvail = todayHours.reduce((n, ago) => n + (ago === 5 ? 30 : 60), 0);
    const d30 = ((27 * 1440 + 1400 + 1433 + todayAvail) / (29 * 1440 + todayChecks)) * 100;
    const d90 = ((58 * 1440 + 1400 + 1433 + todayAvail) / (60 * 1440 + todayChecks)) * 100;
    expect(web.uptime.d30).toBeCloseTo(d30, 2);
    expect(web.uptime.d90).toBeCloseTo(d90, 2);
    expect(html).toContain(`<b>${(Math.floor(web.uptime.h24 * 100) / 100).toFixed(2)} %</b>`);
    expect(html).toMatch(/aria-label="[A-Z][a-z]{2} \d{1,2}: 97\.22 %, 1 incident"/);

    // Incidents: the web one (resolved, 45 min) for everyone; wiki's (open) only for those who see wiki.
    expect(s.incidents.map((i: any) => [i.resourceName, i.resolvedAt === null, i.durationSeconds])).toEqual([['web', false, 45 * 60]]);
    // Anonymous visitors read the kind of failure, from its error code; logged-in ones the probe's message.
    expect(html).toMatch(/Resolved<\/span><b>web<\/b> · HTTP 503 Service Unavailable/);
    expect(html).toContain('45 min');
    const { jar } = await login(d.url, USER.username, USER.password);
    const session = await summaryOf(jar.header());
    expect(session.incidents[0]).toMatchObject({
      resourceName: 'wiki',
      resolvedAt: null,
      cause: '503 Service Unavailable',
      maintenance: false,
    });

    // Maintenance: in progress for cdn (everyone), upcoming for the Internal tools group (its visitors only).
    expect(s.maintenance.active.map((w: any) => [w.name, w.resourceIds])).toEqual([['CDN provider upgrade', [ids.cdn]]]);
    expect(s.maintenance.upcoming).toEqual([]);
    expect(session.maintenance.upcoming.map((w: any) => [w.name, w.resourceIds])).toEqual([
      ['Database failover drill', [ids.ci, ids.wiki]],
    ]);
    expect(s.groups[0].resources.find((r: any) => r.id === ids.cdn)).toMatchObject({ inMaintenance: true, currentStatus: 'available' });
    expect(html).toMatch(/id="r\d+"><div class="top"><span class="nm">cdn<\/span><span class="st maint">Maintenance<\/span>/);
    expect(html).toMatch(/In progress<\/span><b>CDN provider upgrade<\/b>/);
  });

  it('sets ETag and Cache-Control, compresses (br, gzip) with Vary, and needs no JavaScript', async () => {
    const { d } = world();
    const plain = await getRaw(d.url, '/status/main');
    expect(plain.status).toBe(200);
    expect(plain.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers['cache-control']).toBe('public, max-age=10');
    expect(String(plain.headers.vary)).toMatch(/Accept-Encoding/);
    const etag = String(plain.headers.etag);
    expect(etag).toMatch(/^W\/"[\w-]+"$/);
    for (const encoding of ['br', 'gzip']) {
      const res = await getRaw(d.url, '/status/main', { 'accept-encoding': `${encoding}, identity` });
      expect(res.headers['content-encoding']).toBe(encoding);
      expect(res.body.length).toBeLessThan(plain.body.length);
      expect(res.text).toBe(plain.text);
      expect(res.headers.etag).toBe(etag);
    }
    const again = await getRaw(d.url, '/status/main', { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    const { jar } = await login(d.url, USER.username, USER.password);
    expect((await getRaw(d.url, '/status/main', jar.header())).headers['cache-control']).toBe('private, no-cache');

    // Inline CSS and script, each allowed by its hash and nothing else; a refresh for browsers without JavaScript.
    const csp = String(plain.headers['content-security-policy']);
    expect(csp).toContain(`style-src ${sha(inline(plain.text, 'style'))};`);
    expect(csp).toContain(`script-src ${sha(inline(plain.text, 'script'))};`);
    expect(csp).toMatch(/default-src 'none'/);
    expect(plain.text).toContain('<noscript><meta http-equiv="refresh" content="60"></noscript>');
    expect(plain.text).toMatch(/@media \(prefers-color-scheme:dark\)/);
    expect(plain.text).toMatch(/@media \(max-width:600px\)/);
  });

  it('serves the first page at /status, sends / there, and answers 404 for an unknown slug', async () => {
    const { d } = world();
    expect((await getRaw(d.url, '/status')).text).toBe((await getRaw(d.url, '/status/main')).text);
    const root = await send(d.url, 'GET', '/');
    expect(root.status).toBe(302);
    expect(root.headers.location).toBe('/status');
    expect((await send(d.url, 'GET', '/status/nope')).status).toBe(404);
    expect((await send(d.url, 'GET', '/api/status-pages/nope/summary')).status).toBe(404);
  });

  it('describes the summary and the stream in the OpenAPI document', async () => {
    const doc = (await send(world().d.url, 'GET', '/v3/api-docs')).json();
    const summary = doc.paths['/api/status-pages/{slug}/summary'].get;
    expect(summary.responses['200'].content['application/json'].schema.title).toBe('StatusSummary');
    expect(summary.security).toContainEqual({});
    expect(doc.paths['/api/status-pages/{slug}/events'].get.responses['200'].content).toHaveProperty('text/event-stream');
  });
});
