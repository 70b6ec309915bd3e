import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewRouteLogEntry } from '../../daemon/tunnel-admin/route-log-store.ts';
import { expectProblem, fieldsOf, until } from '../helpers/http.ts';
import { InProcessDaemon } from './in-process.ts';
import { watch } from './sse-client.ts';

/**
 * The route log store is fed by the data plane inside the daemon, so this
 * suite runs the real daemon in-process and calls the store's entry point the
 * way the data plane does; everything else goes over HTTP.
 */
const d = new InProcessDaemon();
let routeId: number;
let otherRouteId: number;
const call = (method: string, path: string, body?: unknown) => d.call(method, path, body);
const entry = (routeId: number, i: number): NewRouteLogEntry => ({
  routeId,
  method: 'GET',
  path: `/item/${i}`,
  status: 200,
  durationMs: 3,
  bytesIn: 10,
  bytesOut: 20 + i,
  clientIp: '127.0.0.1',
  agentId: null,
  podId: null,
  error: null,
});

beforeAll(async () => {
  await d.start();
  const agentId = (await call('POST', '/admin/api/agents', { name: 'log-agent' })).json().id;
  routeId = (
    await call('POST', '/admin/api/routes', { name: 'logged', type: 'HTTP', agentId, hostname: 'log.test', target: 'http://x/' })
  ).json().id;
  otherRouteId = (
    await call('POST', '/admin/api/routes', { name: 'other', type: 'HTTP', agentId, hostname: 'other.test', target: 'http://x/' })
  ).json().id;
});
afterAll(async () => {
  await d.dispose();
});

describe('route log', () => {
  it('pages most recent first with Link rel=next and keeps the newest 10,000', async () => {
    for (let i = 0; i < 10_250; i++) d.ctx.routeLog.append(entry(routeId, i));
    await d.ctx.routeLog.flush();
    const first = await call('GET', `/admin/api/routes/${routeId}/log`);
    expect(first.status).toBe(200);
    expect(first.json()).toHaveLength(100);
    expect(first.json()[0]).toEqual({
      id: expect.any(Number),
      routeId,
      at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/),
      method: 'GET',
      path: '/item/10249',
      status: 200,
      durationMs: 3,
      bytesIn: 10,
      bytesOut: 10269,
      clientIp: '127.0.0.1',
      agentId: null,
      podId: null,
      error: null,
    });
    const ids: number[] = [];
    let next: string | undefined = `/admin/api/routes/${routeId}/log?limit=1000`;
    while (next) {
      const page = await call('GET', next);
      ids.push(...page.json().map((e: { id: number }) => e.id));
      next = /^<([^>]+)>; rel="next"$/.exec(String(page.headers.link ?? ''))?.[1];
    }
    expect(ids).toHaveLength(10_000);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    expect(new Set(ids).size).toBe(10_000);
    const oldest = await call('GET', `/admin/api/routes/${routeId}/log?limit=1&before=${ids.at(-1)}`);
    expect(oldest.json()).toEqual([]);
    expect(oldest.headers.link).toBeUndefined();
  });

  it('rejects bad paging parameters with 400 naming them', async () => {
    for (const [query, field] of [
      ['limit=0', 'limit'],
      ['limit=1001', 'limit'],
      ['limit=x', 'limit'],
      ['before=abc', 'before'],
    ]) {
      expect(fieldsOf(expectProblem(await call('GET', `/admin/api/routes/${routeId}/log?${query}`), 400))).toEqual([field]);
    }
  });

  it('streams LOG entries of the watched route only; unwatched routes get no channel', async () => {
    const w = watch(`${d.url}/admin/sse/routes/${routeId}/log`, d.key);
    try {
      await until(() => d.ctx.events.channel(`route-log:${routeId}`).subscriberCount === 1);
      d.ctx.routeLog.append(entry(otherRouteId, 1));
      for (let i = 0; i < 3; i++) d.ctx.routeLog.append({ ...entry(routeId, i), path: `/live/${i}` });
      await w.until((ev) => ev.length >= 3);
      expect(w.events.map((e) => e.kind)).toEqual(['LOG', 'LOG', 'LOG']);
      expect(w.events.map((e) => e.data.path)).toEqual(['/live/0', '/live/1', '/live/2']);
      const latest = (await call('GET', `/admin/api/routes/${routeId}/log?limit=3`)).json();
      expect(w.events.map((e) => e.data)).toEqual(latest.reverse());
      expect(d.ctx.events.has(`route-log:${otherRouteId}`)).toBe(false);
    } finally {
      w.close();
    }
  });

  it('drops entries of a deleted route without losing the rest of the batch', async () => {
    const agentId = (await call('GET', '/admin/api/agents')).json()[0].id;
    const temp = (
      await call('POST', '/admin/api/routes', { name: 'temp', type: 'HTTP', agentId, hostname: 'temp.test', target: 'http://x/' })
    ).json().id;
    d.ctx.routeLog.append(entry(temp, 1));
    expect((await call('DELETE', `/admin/api/routes/${temp}`)).status).toBe(200);
    d.ctx.routeLog.append({ ...entry(otherRouteId, 2), path: '/survivor' });
    await d.ctx.routeLog.flush();
    expect((await call('GET', `/admin/api/routes/${otherRouteId}/log?limit=1`)).json()[0].path).toBe('/survivor');
  });

  it('ends the log stream of a deleted route (a reconnect then gets 404)', async () => {
    const agentId = (await call('GET', '/admin/api/agents')).json()[0].id;
    const temp = (
      await call('POST', '/admin/api/routes', { name: 'watched-temp', type: 'HTTP', agentId, hostname: 'wt.test', target: 'http://x/' })
    ).json().id;
    const w = watch(`${d.url}/admin/sse/routes/${temp}/log`, d.key);
    try {
      await until(() => d.ctx.events.has(`route-log:${temp}`) && d.ctx.events.channel(`route-log:${temp}`).subscriberCount === 1);
      expect((await call('DELETE', `/admin/api/routes/${temp}`)).status).toBe(200);
      await until(() => (w.failure as { code?: number } | undefined)?.code === 404);
      expect(d.ctx.events.has(`route-log:${temp}`)).toBe(false);
    } finally {
      w.close();
    }
  });

  it('writes what is queued when the daemon stops', async () => {
    const podBefore = (await call('GET', '/admin/api/topology')).json().pods;
    for (let i = 0; i < 5; i++) d.ctx.routeLog.append({ ...entry(otherRouteId, i), path: `/last/${i}` });
    await d.stop();
    await d.start();
    const log = (await call('GET', `/admin/api/routes/${otherRouteId}/log?limit=5`)).json();
    expect(log.map((e: { path: string }) => e.path)).toEqual(['/last/4', '/last/3', '/last/2', '/last/1', '/last/0']);
    // The same daemon is the same pod after a restart.
    const podAfter = (await call('GET', '/admin/api/topology')).json().pods;
    expect(podAfter.map((p: { id: number; name: string }) => [p.id, p.name])).toEqual(
      podBefore.map((p: { id: number; name: string }) => [p.id, p.name]),
    );
  });
});
