import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { expectProblem, fieldsOf, login, send } from '../helpers/http.ts';
import { useStatusWorld, USER } from './world.ts';

const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' });

/** Parses the SVG (it must be well-formed XML) and returns its root and the message box's fill. */
function parse(svg: string) {
  expect(XMLValidator.validate(svg)).toBe(true);
  const root = parser.parse(svg).svg;
  const rects = [root.g]
    .flat()
    .flatMap((g: any) => [g?.rect].flat())
    .filter(Boolean);
  const fills = rects.map((r: any) => r.fill).filter((f: string) => f && !f.startsWith('url('));
  return { root, labelFill: fills[0], messageFill: fills[1], title: String(root.title) };
}

/** `/api/badges/{id}/status.svg|uptime.svg|response.svg|history.svg`. */
describe('badges', () => {
  const world = useStatusWorld();
  const badge = (path: string, headers: Record<string, string> = {}) => send(world().d.url, 'GET', path, { headers });

  it('status: a well-formed shields.io SVG, coloured by status, cacheable for 60 s', async () => {
    const { ids, d, target } = world();
    const up = await badge(`/api/badges/${ids.web}/status.svg`);
    expect(up.status).toBe(200);
    expect(up.headers['content-type']).toBe('image/svg+xml; charset=utf-8');
    expect(up.headers['cache-control']).toBe('public, max-age=60');
    const svg = parse(up.text);
    expect(svg.title).toBe('status: up');
    expect(svg.messageFill).toBe('#4c1');
    expect(svg.labelFill).toBe('#555');
    // shields.io's widths: "status" is 43 px wide in Verdana 11px with padding, "up" 23 px.
    expect(svg.root.width).toBe('66');

    target.set('web', 500);
    await d.admin.call(operations.checkResource, { params: { id: ids.web } });
    const down = parse((await badge(`/api/badges/${ids.web}/status.svg`)).text);
    expect([down.title, down.messageFill]).toEqual(['status: down', '#e05d44']);
    target.set('web', 200);
    await d.admin.call(operations.checkResource, { params: { id: ids.web } });

    const maintenance = parse((await badge(`/api/badges/${ids.cdn}/status.svg`)).text);
    expect([maintenance.title, maintenance.messageFill]).toEqual(['status: maintenance', '#007ec6']);
  });

  it('uptime per window and response time, with ?label= and ?style=flat-square', async () => {
    const { ids } = world();
    const month = parse((await badge(`/api/badges/${ids.web}/uptime.svg`)).text);
    expect(month.title).toMatch(/^uptime 30d: 99\.\d\d%$/);
    const day = parse((await badge(`/api/badges/${ids.web}/uptime.svg?window=24h`)).text);
    // 24 hourly rollups (one hour at 50 %) and this hour's raw checks: the world's, and the previous test's failure and recovery.
    expect(day.title).toBe(`uptime 24h: ${(Math.floor(((23 * 60 + 30 + 2) / (24 * 60 + 3)) * 10_000) / 100).toFixed(2)}%`);
    expect(day.messageFill).toBe('#a4a61d');
    // api has no rollups, only the world's first check of this hour: it counts (issue 25); "no data" before any check is in fresh.test.ts.
    const first = parse((await badge(`/api/badges/${ids.api}/uptime.svg?window=7d`)).text);
    expect([first.title, first.messageFill]).toEqual(['uptime 7d: 100%', '#4c1']);

    const response = parse((await badge(`/api/badges/${ids.web}/response.svg?label=latency`)).text);
    expect(response.title).toMatch(/^latency: \d+ ms$/);
    const square = await badge(`/api/badges/${ids.web}/status.svg?style=flat-square&label=API`);
    expect(square.text).toContain('shape-rendering="crispEdges"');
    expect(parse(square.text).title).toBe('API: up');
    // badge-maker copies a control character of ?label= as it is, which no XML parser reads: it is replaced.
    const odd = (await badge(`/api/badges/${ids.web}/status.svg?label=%01x`)).text;
    expect([/[\u0000-\u0008]/.test(odd), parse(odd).title]).toEqual([false, '\ufffdx: up']);

    expect(fieldsOf(expectProblem(await badge(`/api/badges/${ids.web}/uptime.svg?window=1y`), 400))).toEqual(['window']);
    expect(fieldsOf(expectProblem(await badge(`/api/badges/${ids.web}/status.svg?style=plastic`), 400))).toEqual(['style']);
    expect(fieldsOf(expectProblem(await badge('/api/badges/abc/status.svg'), 400))).toEqual(['id']);
  });

  it("history: the page's 90-day bar, a <rect> per day with its date, uptime and incidents in a <title>", async () => {
    const { ids } = world();
    const res = await badge(`/api/badges/${ids.web}/history.svg`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('image/svg+xml; charset=utf-8');
    expect(res.headers['cache-control']).toBe('public, max-age=60');
    expect(res.headers['content-security-policy']).toBe("default-src 'none'; style-src 'unsafe-inline'");
    expect(XMLValidator.validate(res.text)).toBe(true);
    const root = parser.parse(res.text).svg;
    expect(root.role).toBe('img');
    expect(root['aria-label']).toMatch(/^web: uptime per day over 90 days, 99\.\d\d %$/);
    const rects: Array<{ class?: string; x: string; title: string }> = root.rect;
    expect(rects).toHaveLength(90);
    expect(rects.map((r) => Number(r.x))).toEqual(Array.from({ length: 90 }, (_, i) => i * 5));

    // The same figures as the page's bar (its summary): date, uptime as the page writes it, incidents that day.
    const summary = (await badge('/api/status-pages/main/summary')).json();
    const web = summary.groups.flatMap((g: any) => g.resources).find((r: any) => r.id === ids.web);
    const figure = (v: number | null) => (v === null ? 'no data' : v >= 100 ? '100 %' : `${(Math.floor(v * 100) / 100).toFixed(2)} %`);
    const expected = summary.days.map((day: string, i: number) => {
      const n = web.dailyIncidents[i];
      return `${day}: ${figure(web.daily[i])}${n ? `, ${n} incident${n > 1 ? 's' : ''}` : ''}`;
    });
    expect(rects.map((r) => r.title)).toEqual(expected);
    // Spot checks against the world's rollups: 10 days ago 1400 of 1440 checks and its incident, 3 days ago 1433; nothing 61 days ago.
    expect(rects[79].title).toMatch(/^\d{4}-\d\d-\d\d: 97\.22 %, 1 incident$/);
    expect([rects[79].class, rects[86].class, rects[85].class, rects[28].class]).toEqual(['b', 'a', undefined, 'n']);
    expect(rects[86].title).toMatch(/: 99\.51 %$/);
    expect(rects[28].title).toMatch(/: no data$/);

    expect((await badge(`/api/badges/${ids.web}/history.svg?label=Website`)).text).toContain('aria-label="Website: uptime per day');
    // A label with a character XML forbids even escaped still makes a well-formed SVG.
    const odd = (await badge(`/api/badges/${ids.web}/history.svg?label=%01%3Cb%3E`)).text;
    expect([XMLValidator.validate(odd), /[\u0000-\u0008]/.test(odd)]).toEqual([true, false]);
    expect(odd).toContain('aria-label="\ufffd&lt;b&gt;: uptime per day');
    expectProblem(await badge(`/api/badges/${ids.vault}/history.svg`), 404);
    expectProblem(await badge(`/api/badges/${ids.wiki}/history.svg`), 404);
    const { jar } = await login(world().d.url, USER.username, USER.password);
    const wiki = await badge(`/api/badges/${ids.wiki}/history.svg`, jar.header());
    expect([wiki.status, wiki.headers['cache-control']]).toEqual([200, 'private, max-age=60']);
    expect(fieldsOf(expectProblem(await badge('/api/badges/x/history.svg'), 400))).toEqual(['id']);
  });

  it('follows the visibility of GET /api/resources/{id}: 404 for what the caller may not see', async () => {
    const { ids, d } = world();
    expectProblem(await badge(`/api/badges/${ids.vault}/status.svg`), 404);
    expectProblem(await badge(`/api/badges/${ids.vault}/status.svg`, { authorization: `Bearer ${d.adminKey}` }), 404);
    expectProblem(await badge(`/api/badges/${ids.wiki}/uptime.svg`), 404);
    expectProblem(await badge('/api/badges/987654/response.svg'), 404);
    const { jar } = await login(d.url, USER.username, USER.password);
    expect((await badge(`/api/badges/${ids.wiki}/status.svg`, jar.header())).status).toBe(200);
    // A resource in a HIDDEN and a PUBLIC group is public, as in the resource list.
    expect((await badge(`/api/badges/${ids.api}/status.svg`)).status).toBe(200);
  });

  it('is private to a logged-in caller (session or API key), as the status page is', async () => {
    const { ids, d } = world();
    const { jar } = await login(d.url, USER.username, USER.password);
    for (const headers of [jar.header(), { authorization: `Bearer ${d.adminKey}` }]) {
      for (const id of [ids.wiki, ids.web])
        expect((await badge(`/api/badges/${id}/status.svg`, headers)).headers['cache-control']).toBe('private, max-age=60');
    }
    expect((await badge(`/api/badges/${ids.web}/status.svg`)).headers['cache-control']).toBe('public, max-age=60');
  });

  it('keeps Vary: Origin beside its own Vary when CORS answers (badges and the page summary)', async () => {
    const { ids, d } = world();
    const origin = 'https://dashboard.example.com';
    await d.admin.call(operations.addCorsOrigin, { body: { origin } });
    try {
      for (const path of [`/api/badges/${ids.web}/status.svg`, '/api/status-pages/main/summary']) {
        const res = await badge(path, { origin, 'accept-encoding': 'gzip' });
        expect(res.status, path).toBe(200);
        expect(res.headers['access-control-allow-origin'], path).toBe(origin);
        const vary = String(res.headers.vary)
          .split(',')
          .map((v) => v.trim().toLowerCase());
        expect(vary, path).toContain('origin');
        expect(vary, path).toEqual(expect.arrayContaining(['cookie', 'authorization', 'x-api-key']));
        if (path.endsWith('summary')) expect(vary, path).toContain('accept-encoding');
        // Named once each.
        expect(new Set(vary).size, path).toBe(vary.length);
      }
    } finally {
      await d.admin.call(operations.removeCorsOrigin, { query: { origin } });
    }
  });
});
