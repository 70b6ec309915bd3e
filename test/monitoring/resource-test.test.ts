import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { until } from '../helpers/http.ts';
import { type Caller, call, ok, subscribe } from './helpers.ts';

// `POST /admin/api/resources/test` (docs/API.md#testing-a-check): one check of a resource body, now,
// against real servers on loopback, with nothing stored and nothing published.
let d: TestDaemon;
let admin: Caller;
let web: Server;
let base: string;
const TOKEN = 't0ken-s3cret-9d2e';
/** Requests to /hold wait here until the test releases them. */
const held: Array<() => void> = [];

beforeAll(async () => {
  web = createServer((req, res) => {
    const json = (status: number, value: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json', 'x-version': '7' }).end(JSON.stringify(value));
    switch (req.url) {
      case '/up':
        return json(200, { status: 'UP', items: [1, 2, 3] });
      case '/down':
        return json(200, { status: 'DOWN' });
      case '/big':
        return void res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(10_000));
      case '/auth':
        return req.headers.authorization === `Bearer ${TOKEN}` && req.method === 'POST' ? json(200, { status: 'UP' }) : json(401, {});
      case '/hold':
        return void held.push(() => json(200, { status: 'UP' }));
      default:
        return json(503, { status: 'DOWN' });
    }
  });
  await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
  d = await startDaemon();
  admin = { kind: 'key', token: d.adminKey };
});

afterAll(async () => {
  for (const release of held.splice(0)) release();
  await d?.stop();
  web?.closeAllConnections();
  await new Promise((r) => web?.close(r));
});

const test = (body: Record<string, unknown>) => call(d, admin, 'POST', '/admin/api/resources/test', body);
const http = (path: string, conditions?: string[]) => ({
  resourceType: 'HTTP',
  target: `${base}${path}`,
  ...(conditions ? { conditions } : {}),
});

describe('POST /admin/api/resources/test', () => {
  it('passes as the check would: AVAILABLE, at the daemon, with the time it ran', async () => {
    const result = await ok(test(http('/up', ['[STATUS] == 200', '[BODY].status == UP', 'len([BODY].items) == 3'])));
    expect(result).toMatchObject({ location: 'daemon', status: 'AVAILABLE', errorCode: null, message: '200 OK' });
    expect(result.checkedAt).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('fails as the check would, naming the first failed condition with the value seen', async () => {
    const result = await ok(test(http('/down', ['[STATUS] == 200', '[BODY].status == UP'])));
    expect(result).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONDITION_FAILED' });
    expect(result.message).toContain('[BODY].status (DOWN) == UP');
    expect(result.report.conditions).toEqual([
      { condition: '[STATUS] == 200', ok: true, message: expect.stringContaining('200') },
      { condition: '[BODY].status == UP', ok: false, message: '[BODY].status (DOWN) == UP' },
    ]);
  });

  it("returns the response's status, headers and first 4 KiB of body, and the timing", async () => {
    const result = await ok(test(http('/big')));
    expect(result.status).toBe('AVAILABLE');
    const { response } = result.report;
    expect(response).toMatchObject({ status: 200, statusText: 'OK', bodyTruncated: true });
    expect(response.headers['content-type']).toBe('text/plain');
    expect(response.body).toBe('x'.repeat(4096));
    const small = await ok(test(http('/up')));
    expect(small.report.response.headers['x-version']).toBe('7');
    expect(JSON.parse(small.report.response.body)).toEqual({ status: 'UP', items: [1, 2, 3] });
    expect(small.report.response.bodyTruncated).toBe(false);
    for (const { timing } of [result, small]) {
      expect(Object.keys(timing).sort()).toEqual(['connectMs', 'dnsMs', 'firstByteMs', 'tlsMs', 'totalMs']);
      expect(timing.tlsMs).toBeNull(); // plain HTTP
      expect(timing.firstByteMs).toBeGreaterThanOrEqual(0);
      expect(timing.totalMs).toBeGreaterThanOrEqual(timing.firstByteMs);
    }
  });

  it("without conditions it is the seed's check: a 503 is NOT_AVAILABLE with the status as the code", async () => {
    const result = await ok(test(http('/unavailable')));
    expect(result).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: '503' });
  });

  it("sends the body's request, secrets included, and never returns or logs a secret", async () => {
    const body = { ...http('/auth', ['[STATUS] == 200']), method: 'POST', auth: { type: 'bearer', token: TOKEN } };
    const res = await test(body);
    expect(res.json().status, res.text).toBe('AVAILABLE');
    expect((await ok(test({ ...body, auth: { type: 'bearer', token: 'wrong' } }))).status).toBe('NOT_AVAILABLE');
    expect(res.text).not.toContain(TOKEN);
    expect(JSON.stringify(d.logs) + d.stderr()).not.toContain(TOKEN);
  });

  it('stores nothing: no resource, no history, no event', async () => {
    const before = await ok(call(d, admin, 'GET', '/admin/api/resources'));
    const events = subscribe(d, d.adminKey, ['CHECK_COMPLETED', 'STATUS_CHANGED']);
    try {
      await events.opened;
      await ok(test({ ...http('/down', ['[BODY].status == UP']), name: 'probe-only' }));
      await ok(test(http('/up')));
      // A stored resource's check now is published after them: once it arrives, theirs would have too.
      const { id } = await ok(call(d, admin, 'POST', '/api/resources', { name: 'marker', ...http('/up'), intervalSeconds: 3600 }));
      await ok(call(d, admin, 'POST', `/api/resources/${id}/check`));
      await until(() => events.events.some((e) => e.kind === 'CHECK_COMPLETED' && e.data.resourceId === id));
      expect(events.events.every((e) => e.data.resourceId === id)).toBe(true);
      const after = await ok(call(d, admin, 'GET', '/admin/api/resources'));
      expect(after.map((r: any) => r.name)).toEqual([...before.map((r: any) => r.name), 'marker']);
      expect(await ok(call(d, admin, 'GET', `/api/resources/${id}/history`))).toHaveLength(1);
      await ok(call(d, admin, 'DELETE', `/api/resources/${id}`));
    } finally {
      events.close();
    }
  });

  it('a bad body is a 400 naming the field, as create answers it', async () => {
    const unparsable = await test(http('/up', ['[STATUS] == 200', '[BODY].status==UP']));
    expect(unparsable.status, unparsable.text).toBe(400);
    expect(unparsable.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(unparsable.json().errors).toEqual([{ field: 'conditions[1]', message: expect.stringMatching(/^column \d+: /) }]);
    const tcpBody = await test({ resourceType: 'TCP', target: '127.0.0.1:9', conditions: ['[STATUS] == 200'] });
    expect(tcpBody.status).toBe(400);
    expect(tcpBody.json().errors[0].field).toBe('conditions[0]');
    const noTarget = await test({ resourceType: 'HTTP' });
    expect(noTarget.status).toBe(400);
    expect(JSON.stringify(noTarget.json().errors)).toContain('target');
    const unknown = await test({ ...http('/up'), location: 'nowhere' });
    expect(unknown.status).toBe(400);
    expect(unknown.json().errors[0].field).toBe('location');
  });

  it('is for administrators only', async () => {
    const res = await call(d, { kind: 'anonymous' }, 'POST', '/admin/api/resources/test', http('/up'));
    expect(res.status).toBe(401);
  });

  it('runs at most 4 at once: a fifth is a 429 problem, and the 4 finish', async () => {
    const running = [1, 2, 3, 4].map(() => test(http('/hold')));
    await until(() => held.length === 4, 20);
    const fifth = await test(http('/up'));
    expect(fifth.status, fifth.text).toBe(429);
    expect(fifth.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(fifth.json().detail).toMatch(/4 test checks are running/);
    for (const release of held.splice(0)) release();
    for (const res of await Promise.all(running)) expect(res.json().status).toBe('AVAILABLE');
    expect((await ok(test(http('/up')))).status).toBe('AVAILABLE');
  });
});
