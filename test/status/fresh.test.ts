import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { EventSource } from 'eventsource';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { send, until } from '../helpers/http.ts';
import { openDb } from '../helpers/test-database.ts';
import { switchableTarget } from './world.ts';

/** A loopback port nothing listens on (taken from the OS, then closed): connecting is refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

/**
 * `read()` again until it gives `want` (a change reaches the page's cache through an event, just after the
 * check's answer), at most 50 times; the last value is returned for the assertion to show.
 */
async function settled<T>(read: () => Promise<T>, want: T): Promise<T> {
  for (let i = 0; i < 50; i++) {
    const value = await read();
    if (isDeepStrictEqual(value, want)) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  return read();
}

/**
 * Issue 25, item 6: a page right from the first checks (no rollup written:
 * figures, the bar and badges count the raw checks of the hour under way),
 * the banner's levels, and probe errors anonymous visitors may read. The
 * scheduler is off: checks happen when the test asks for them.
 */
describe('status page from minute one, safe to publish', () => {
  let d: TestDaemon;
  let target: Awaited<ReturnType<typeof switchableTarget>>;
  const ids: Record<string, number> = {};
  let refused = '';

  beforeAll(async () => {
    [d, target] = await Promise.all([startDaemon({ args: ['--scheduler', 'off'] }), switchableTarget()]);
    const a = d.admin;
    const group = async (name: string) => (await a.call(operations.createGroup, { body: { name, visibility: 'PUBLIC' } })).id;
    const [fresh, levels] = [await group('Fresh'), await group('Levels')];
    const http = async (name: string, groupId: number) =>
      (ids[name] = (
        await a.call(operations.createResource, {
          body: { name, resourceType: 'HTTP', target: target.url(name), intervalSeconds: 3600, groupIds: [groupId] },
        })
      ).id);
    await http('site', fresh);
    refused = `127.0.0.1:${await closedPort()}`;
    ids.db = (
      await a.call(operations.createResource, {
        body: { name: 'db', resourceType: 'TCP', target: refused, intervalSeconds: 3600, groupIds: [fresh] },
      })
    ).id;
    for (const name of ['x', 'y', 'z']) await http(name, levels);
    await a.call(operations.createStatusPage, { body: { slug: 'fresh', title: 'Fresh', groupIds: [fresh] } });
    await a.call(operations.createStatusPage, { body: { slug: 'levels', title: 'Levels', groupIds: [levels] } });
  }, 60_000);
  afterAll(async () => {
    await Promise.all([d?.stop(), target?.close()]);
  });

  const check = (id: number, times = 1) =>
    (async () => {
      for (let i = 0; i < times; i++) await d.admin.call(operations.checkResource, { params: { id } });
    })();
  const summary = async (slug: string, headers: Record<string, string> = {}) => {
    const res = await send(d.url, 'GET', `/api/status-pages/${slug}/summary`, { headers });
    expect(res.status).toBe(200);
    return res.json();
  };
  const html = async (slug: string) => (await send(d.url, 'GET', `/status/${slug}`)).text;
  const badge = async (id: number, window: string) =>
    /<title>([^<]*)<\/title>/.exec((await send(d.url, 'GET', `/api/badges/${id}/uptime.svg?window=${window}`)).text)?.[1];
  const resourceOf = (s: any, id: number) => s.groups.flatMap((g: any) => g.resources).find((r: any) => r.id === id);

  it('shows figures, the bar and badges from the first check, with nothing rolled up, and an outage at once', async () => {
    // Before any check: no figure anywhere.
    const before = resourceOf(await summary('fresh'), ids.site);
    expect(before.uptime).toEqual({ h24: null, d30: null, d90: null });
    expect(await badge(ids.site, '24h')).toBe('uptime 24h: no data');

    await check(ids.site);
    // Nothing of this hour is rolled up: the rollup job writes an hour once it is over.
    const db = await openDb(d);
    try {
      const [{ n }] = await db.query<{ n: number }>('SELECT count(*) AS n FROM check_rollups_hourly WHERE resource_id = ?', ids.site);
      expect(Number(n)).toBe(0);
    } finally {
      await db.close();
    }
    expect(await settled(async () => resourceOf(await summary('fresh'), ids.site).uptime, { h24: 100, d30: 100, d90: 100 })).toEqual({
      h24: 100,
      d30: 100,
      d90: 100,
    });
    const up = resourceOf(await summary('fresh'), ids.site);
    expect(up.daily[89]).toBe(100);
    expect(up.daily[88]).toBeNull();
    for (const w of ['24h', '7d', '30d', '90d']) expect(await badge(ids.site, w)).toBe(`uptime ${w}: 100%`);
    // site's row: today's cell is a 100 % day, and its figures (db, never checked, still has none).
    const row = (page: string, id: number) => new RegExp(`<li class="res" id="r${id}">.*?</li>`).exec(page)?.[0] ?? '';
    const page = await html('fresh');
    expect(row(page, ids.site)).toMatch(/<i class="n"><\/i><i><\/i><\/div>/);
    expect(row(page, ids.site)).toContain('24 h <b>100 %</b></span><span>30 days <b>100 %</b></span><span>90 days <b>100 %</b>');
    expect(row(page, ids.db)).toContain('24 h <b>—</b>');

    // The site fails once: the figures, today's bar cell and the badge say so on the next read.
    target.set('site', 503);
    await check(ids.site);
    expect(await settled(async () => resourceOf(await summary('fresh'), ids.site).uptime, { h24: 50, d30: 50, d90: 50 })).toEqual({
      h24: 50,
      d30: 50,
      d90: 50,
    });
    const down = resourceOf(await summary('fresh'), ids.site);
    expect(down.currentStatus).toBe('not_available');
    expect(down.daily[89]).toBe(50);
    expect(await badge(ids.site, '24h')).toBe('uptime 24h: 50.00%');
    expect(row(await html('fresh'), ids.site)).toMatch(
      /<i class="c" tabindex="0" role="img" aria-label="[A-Z][a-z]{2} \d{1,2}: 50\.00 %"><\/i><\/div>/,
    );
    target.set('site', 200);
  });

  it('banner: operational, degraded, partial outage for 1 of 3 down, major outage for 3 of 3', async () => {
    const read = async () => {
      const state = (await summary('levels')).overall.state;
      const page = await html('levels');
      const [, cls, label] = /<section id="overall" class="banner ([a-z_]+)"[^>]*><h2 id="overall-label">([^<]*)<\/h2>/.exec(page) ?? [];
      return [state, cls, label];
    };
    const banner = async (want?: string[]) => (want ? settled(read, want) : read());
    for (const name of ['x', 'y', 'z']) await check(ids[name]);
    expect(await banner(['OPERATIONAL', 'operational', 'All systems operational'])).toEqual([
      'OPERATIONAL',
      'operational',
      'All systems operational',
    ]);
    // One failing check: below the failure threshold (3), no incident: degraded.
    target.set('x', 503);
    await check(ids.x);
    expect(await banner(['DEGRADED', 'degraded', 'Degraded service'])).toEqual(['DEGRADED', 'degraded', 'Degraded service']);
    await check(ids.x, 2);
    expect(await banner(['PARTIAL_OUTAGE', 'partial_outage', 'Partial outage'])).toEqual([
      'PARTIAL_OUTAGE',
      'partial_outage',
      'Partial outage',
    ]);
    for (const name of ['y', 'z']) {
      target.set(name, 503);
      await check(ids[name], 3);
    }
    expect(await banner(['MAJOR_OUTAGE', 'major_outage', 'Major outage'])).toEqual(['MAJOR_OUTAGE', 'major_outage', 'Major outage']);
    for (const name of ['x', 'y', 'z']) {
      target.set(name, 200);
      await check(ids[name]);
    }
    expect((await banner(['OPERATIONAL', 'operational', 'All systems operational']))[0]).toBe('OPERATIONAL');
  });

  it("shows anonymous visitors a generic cause, not the probe's message with its address; the page setting shows it", async () => {
    // Follow the page's stream while the incident opens.
    const frames: string[] = [];
    const source = new EventSource(`${d.url}/api/status-pages/fresh/events`);
    for (const kind of ['SNAPSHOT', 'PAGE_CHANGED']) source.addEventListener(kind, (e) => frames.push((e as MessageEvent).data));
    try {
      await until(() => frames.length > 0);
      await check(ids.db, 3);
      await until(() => frames.some((f) => f.includes('"down"')));
      const [incident] = await d.admin.call(operations.listIncidents, { query: { resourceId: ids.db, state: 'open' } });
      expect(incident.cause.message).toContain(`ECONNREFUSED ${refused}`);

      await settled(async () => (await summary('fresh')).incidents.length, 1);
      const anonymous = await summary('fresh');
      expect(anonymous.incidents[0]).toMatchObject({ resourceName: 'db', cause: 'connection refused', errorCode: 'CONNECTION_ERROR' });
      const page = await html('fresh');
      expect(page).toContain('<b>db</b> · connection refused');
      for (const text of [JSON.stringify(anonymous), page, ...frames]) {
        expect(text).not.toContain(refused);
        expect(text).not.toContain('ECONNREFUSED');
      }
      // Logged-in visitors see the probe's message.
      const viewer = await summary('fresh', { authorization: `Bearer ${d.adminKey}` });
      expect(viewer.incidents[0].cause).toContain(refused);

      // The page's setting shows it to everyone.
      const [fresh] = (await d.admin.call(operations.listStatusPages)).filter((p) => p.slug === 'fresh');
      expect(fresh.showErrorDetails).toBe(false);
      const updated = await d.admin.call(operations.updateStatusPage, { params: { id: fresh.id }, body: { showErrorDetails: true } });
      expect(updated.showErrorDetails).toBe(true);
      expect(await settled(async () => (await summary('fresh')).incidents[0].cause.includes(refused), true)).toBe(true);
      expect((await summary('fresh')).incidents[0].cause).toContain(`ECONNREFUSED ${refused}`);
      expect(await html('fresh')).toContain(refused);
      await d.admin.call(operations.updateStatusPage, { params: { id: fresh.id }, body: { showErrorDetails: false } });
      expect(await settled(async () => (await html('fresh')).includes(refused), false)).toBe(false);
    } finally {
      source.close();
    }
  });
});
