import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { edge, startTarget, startTunnel, subscribe, type Tunnel, until } from './helpers.ts';

const N = 100;
const STATUSES = [200, 201, 404, 418, 500];

interface LogEntry {
  id: number;
  method: string;
  path: string;
  status: number;
  bytesIn: number;
  bytesOut: number;
  error: string | null;
}

/**
 * The access log after its write path was made cheaper (issue 20): 100 requests at once through
 * two routes, each with its own body sizes and status, must each leave exactly one entry with
 * the right figures. Entries lost, doubled, or given another request's figures fail it.
 */
describe('tunnel: the access log under 100 concurrent requests', () => {
  let tunnel: Tunnel;
  let target: Awaited<ReturnType<typeof startTarget>>;
  const routes: number[] = [];

  beforeAll(async () => {
    // /r/<i>: answers with i * 13 bytes and status STATUSES[i % 5], after reading the request body.
    target = await startTarget((req, res) => {
      const i = Number(req.url!.split('/')[2]);
      req.resume();
      req.on('end', () => {
        res.writeHead(STATUSES[i % STATUSES.length], { 'content-type': 'text/plain' });
        res.end('x'.repeat(i * 13));
      });
    });
    tunnel = await startTunnel();
    routes.push(await tunnel.httpRoute('log-a', target.url, 'a.test'), await tunnel.httpRoute('log-b', target.url, 'b.test'));
  });
  afterAll(async () => {
    await tunnel?.close();
    await target?.close();
  });

  it('gets one entry per request with its bytes and status', async () => {
    const host = (i: number) => (i % 2 ? 'b.test' : 'a.test');
    // Route a's LOG stream is watched: its events are built from the values written and the ids returned.
    const stream = await subscribe(tunnel.daemon, `/admin/sse/routes/${routes[0]}/log`);
    const answers = await Promise.all(
      Array.from({ length: N }, (_, i) => edge(tunnel.daemon.edgeUrl, host(i), 'POST', `/r/${i}`, Buffer.alloc(i * 7, 'y'))),
    );
    answers.forEach((res, i) => {
      expect(res.status).toBe(STATUSES[i % STATUSES.length]);
      expect(res.body.length).toBe(i * 13);
    });
    const read = async (routeId: number): Promise<LogEntry[]> =>
      JSON.parse((await tunnel.daemon.admin.raw('GET', `/admin/api/routes/${routeId}/log?limit=1000`)).text);
    // Entries are written in batches: wait until every request has one (a lost entry never comes: the test times out).
    await until(async () => (await read(routes[0])).length + (await read(routes[1])).length >= N);
    const [a, b] = [await read(routes[0]), await read(routes[1])];
    expect(a).toHaveLength(N / 2);
    expect(b).toHaveLength(N / 2);
    const byPath = new Map<string, LogEntry>();
    for (const [entries, parity] of [
      [a, 0],
      [b, 1],
    ] as const) {
      for (const e of entries) {
        const i = Number(e.path.split('/')[2]);
        expect(i % 2, `${e.path} logged on the other route`).toBe(parity);
        expect(byPath.has(e.path), `${e.path} logged twice`).toBe(false);
        byPath.set(e.path, e);
      }
    }
    for (let i = 0; i < N; i++) {
      expect(byPath.get(`/r/${i}`), `/r/${i}`).toMatchObject({
        method: 'POST',
        status: STATUSES[i % STATUSES.length],
        bytesIn: i * 7,
        bytesOut: i * 13,
        error: null,
      });
    }
    try {
      await until(() => stream.events.filter((e) => e.event === 'LOG').length >= N / 2);
      const streamed = stream.events.filter((e) => e.event === 'LOG').map((e) => e.data);
      expect(streamed.sort((x, y) => x.id - y.id)).toEqual([...a].sort((x, y) => x.id - y.id));
    } finally {
      stream.close();
    }
  }, 60_000);
});
