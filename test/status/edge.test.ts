import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { bearer, expectProblem, fieldsOf, send } from '../helpers/http.ts';
import { getRaw } from './fetch-raw.ts';
import { useStatusWorld } from './world.ts';

/**
 * A page with `customHostname` on the edge listener: `/` (and the page's
 * summary and stream) for that Host, anonymous view; every other path stays
 * the routes'. A route on the same hostname and prefix `/` clashes (409),
 * whichever comes second.
 */
describe('status page on its custom hostname', () => {
  const world = useStatusWorld();
  const json = (method: string, path: string, body: unknown) =>
    send(world().d.url, method, path, {
      headers: { ...bearer(world().d.adminKey), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('serves the page at / for its Host on the edge, and leaves other hosts and paths to the routes', async () => {
    const { d, page } = world();
    await d.admin.call(operations.updateStatusPage, { params: { id: page.id }, body: { customHostname: 'status.example.com' } });
    const onEdge = await getRaw(d.edgeUrl, '/', { host: 'Status.Example.com:8081' });
    expect(onEdge.status).toBe(200);
    expect(onEdge.headers['content-type']).toBe('text/html; charset=utf-8');
    // Anonymous there (the API listener's session cookie is not for this host): the same page as /status/main anonymously.
    // Its history is at /history there.
    const apiPage = (await getRaw(d.url, '/status/main')).text;
    expect(onEdge.text).toBe(apiPage.replace('href="/status/main/history"', 'href="/history"'));
    const summary = await getRaw(d.edgeUrl, '/api/status-pages/main/summary', { host: 'status.example.com' });
    expect(JSON.parse(summary.text).groups.map((g: { name: string }) => g.name)).toEqual(['Website']);
    expect((await getRaw(d.edgeUrl, '/other', { host: 'status.example.com' })).status).toBe(404);
    // The page's script follows its stream there too.
    const edge = new URL(d.edgeUrl);
    const first = await new Promise<{ type: string; text: string }>((resolve, reject) => {
      const req = request(
        { host: edge.hostname, port: edge.port, path: '/api/status-pages/main/events', headers: { host: 'status.example.com' } },
        (res) => {
          res.once('data', (chunk: Buffer) => {
            resolve({ type: String(res.headers['content-type']), text: chunk.toString() });
            req.destroy();
          });
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(first.type).toBe('text/event-stream; charset=utf-8');
    expect(first.text).toMatch(/^id: \d+\nevent: SNAPSHOT\ndata: \{"overall":\{"state":"MAINTENANCE"/);
    expect(JSON.parse((await getRaw(d.edgeUrl, '/', { host: 'app.example.com' })).text)).toMatchObject({
      status: 404,
      type: 'urn:monctl:problem:no-route',
    });

    // A route under another prefix of that host takes its paths (503: its agent is not connected).
    const agent = await d.admin.call(operations.createAgent, { body: { name: 'office' } });
    await d.admin.call(operations.createRoute, {
      body: {
        name: 'app',
        type: 'HTTP',
        agentId: agent.id,
        target: 'http://127.0.0.1:9',
        hostname: 'status.example.com',
        pathPrefix: '/app',
      },
    });
    expect((await getRaw(d.edgeUrl, '/app/x', { host: 'status.example.com' })).status).toBe(503);
    expect((await getRaw(d.edgeUrl, '/', { host: 'status.example.com' })).status).toBe(200);
  });

  it('clashes (409) with a route on the same hostname and prefix /, in both directions', async () => {
    const { d, page } = world();
    const agent =
      (await d.admin.call(operations.listAgents))[0] ?? (await d.admin.call(operations.createAgent, { body: { name: 'office' } }));
    const route = {
      name: 'site',
      type: 'HTTP' as const,
      agentId: agent.id,
      target: 'http://127.0.0.1:9',
      hostname: 'status.example.com',
      pathPrefix: '/',
    };
    // The page holds status.example.com: a route there on / is refused.
    await d.admin.call(operations.updateStatusPage, { params: { id: page.id }, body: { customHostname: 'status.example.com' } });
    const refused = expectProblem(await json('POST', '/admin/api/routes', route), 409);
    expect(fieldsOf(refused)).toEqual(['hostname']);
    expect(refused.detail).toMatch(/Status page main/);
    const other = await d.admin.call(operations.createRoute, { body: { ...route, name: 'www', hostname: 'www.example.com' } });
    expect(fieldsOf(expectProblem(await json('PUT', `/admin/api/routes/${other.id}`, { hostname: 'status.example.com' }), 409))).toEqual([
      'hostname',
    ]);

    // A route holds www.example.com/: a page cannot take that hostname.
    expect(
      fieldsOf(expectProblem(await json('PATCH', `/admin/api/status-pages/${page.id}`, { customHostname: 'www.example.com' }), 409)),
    ).toEqual(['customHostname']);
    expect(
      fieldsOf(
        expectProblem(await json('POST', '/admin/api/status-pages', { slug: 'www', title: 'x', customHostname: 'WWW.example.com' }), 409),
      ),
    ).toEqual(['customHostname']);

    // Freed on either side, the other may take it.
    await d.admin.call(operations.updateStatusPage, { params: { id: page.id }, body: { customHostname: null } });
    expect((await json('POST', '/admin/api/routes', route)).status).toBe(200);
    expect((await getRaw(d.edgeUrl, '/', { host: 'status.example.com' })).status).toBe(503);
  });
});
