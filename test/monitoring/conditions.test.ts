import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { type Caller, call, closedPort, ok, tcpListener } from './helpers.ts';

// Conditions on HTTP and TCP resources, end to end: the API refuses what cannot hold, the daemon's
// checks read what the conditions need from real servers on loopback (docs/DECISIONS.md#probe-conditions).
let d: TestDaemon;
let admin: Caller;
let web: Server;
let base: string;
let tcp: Awaited<ReturnType<typeof tcpListener>>;

const json = (value: unknown) => Buffer.from(JSON.stringify(value));
/** A JSON body of `size` bytes: `{"status":"UP","pad":"xxxx…"}`. */
const bigJson = (size: number) => Buffer.from(`{"status":"UP","pad":"${'x'.repeat(size - 24)}"}`);

beforeAll(async () => {
  web = createServer((req, res) => {
    const send = (body: Buffer, headers: Record<string, string> = {}) =>
      res.writeHead(200, { 'content-type': 'application/json', 'x-version': '2', ...headers }).end(body);
    switch (req.url) {
      case '/down':
        return send(json({ status: 'DOWN' }));
      case '/up':
        return send(json({ status: 'UP', items: [1, 2, 3] }));
      case '/gzip':
        return send(gzipSync(json({ status: 'UP' })), { 'content-encoding': 'gzip' });
      case '/br':
        return send(brotliCompressSync(json({ status: 'UP' })), { 'content-encoding': 'br' });
      case '/deflate':
        return send(deflateSync(json({ status: 'UP' })), { 'content-encoding': 'deflate' });
      case '/bad-gzip':
        return send(Buffer.from('not gzip at all'), { 'content-encoding': 'gzip' });
      case '/big': {
        // 5 MiB streamed, past the 1 MiB cap.
        res.writeHead(200, { 'content-type': 'application/json' });
        const body = bigJson(5 * 1024 * 1024);
        let at = 0;
        const pump = () => {
          while (at < body.length) {
            const chunk = body.subarray(at, at + 64 * 1024);
            at += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        return pump();
      }
      case '/big-gzip':
        // 5 MiB that compresses to a few KiB: decoding must stop at the cap too.
        return send(gzipSync(bigJson(5 * 1024 * 1024)), { 'content-encoding': 'gzip' });
      case '/invalid':
        return send(Buffer.from('<html>not json {'));
      case '/slow':
        // A slow first byte: the head comes after 600 ms.
        return void setTimeout(() => send(json({ status: 'UP' })), 600);
      case '/unauthorized':
        return void res.writeHead(401).end();
      case '/unavailable':
        return void res.writeHead(503).end('down');
      default:
        return send(json({}));
    }
  });
  await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
  [d, tcp] = await Promise.all([startDaemon(), tcpListener()]);
  admin = { kind: 'key', token: d.adminKey };
});

afterAll(async () => {
  await Promise.all([d?.stop(), tcp?.close()]);
  web?.closeAllConnections();
  await new Promise((r) => web?.close(r));
});

let named = 0;
/** Creates a resource (checked hourly, so only the on-demand checks below count) and returns it. */
function create(resourceType: 'HTTP' | 'TCP', target: string, conditions?: string[]): Promise<any> {
  const body = { name: `cond-${++named}`, resourceType, target, intervalSeconds: 3600, ...(conditions ? { conditions } : {}) };
  return ok(call(d, admin, 'POST', '/api/resources', body));
}

/** Checks now; the history entry. */
async function check(resourceType: 'HTTP' | 'TCP', target: string, conditions?: string[]): Promise<any> {
  const { id } = await create(resourceType, target, conditions);
  return ok(call(d, admin, 'POST', `/api/resources/${id}/check`));
}

describe('conditions in the API', () => {
  it('are stored and shown on the admin views, and removed with an empty list', async () => {
    const conditions = ['[STATUS] == 200', '[BODY].status == UP'];
    const { id } = await create('HTTP', `${base}/up`, conditions);
    expect((await ok(call(d, admin, 'GET', `/admin/api/resources/${id}`))).conditions).toEqual(conditions);
    const listed = (await ok(call(d, admin, 'GET', '/admin/api/resources'))).find((r: any) => r.id === id);
    expect(listed.conditions).toEqual(conditions);
    const patched = await ok(call(d, admin, 'PATCH', `/api/resources/${id}`, { conditions: [] }));
    expect(patched.conditions).toEqual([]);
    expect((await ok(call(d, admin, 'GET', `/admin/api/resources/${id}`))).conditions).toEqual([]);
  });

  it('a condition that does not parse is a 400 naming conditions[i] and the column', async () => {
    const res = await call(d, admin, 'POST', '/api/resources', {
      name: 'bad-condition',
      resourceType: 'HTTP',
      target: `${base}/up`,
      conditions: ['[STATUS] == 200', '[BODY].status==UP'],
    });
    expect(res.status, res.text).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    const problem = res.json();
    expect(problem.errors).toEqual([{ field: 'conditions[1]', message: expect.stringMatching(/^column \d+: /) }]);
    expect(problem.detail).toContain('conditions[1]');
  });

  it('a placeholder the type cannot answer is a 400: [STATUS] on a TCP resource, also when PATCH changes the type', async () => {
    const res = await call(d, admin, 'POST', '/api/resources', {
      name: 'tcp-body',
      resourceType: 'TCP',
      target: tcp.target,
      conditions: ['[CONNECTED] == true', '[STATUS] == 200'],
    });
    expect(res.status, res.text).toBe(400);
    expect(res.json().errors).toEqual([
      { field: 'conditions[1]', message: expect.stringMatching(/^column 1: \[STATUS\] does not apply to TCP/) },
    ]);
    const { id } = await create('HTTP', `${base}/up`, ['[STATUS] == 200']);
    const moved = await call(d, admin, 'PATCH', `/api/resources/${id}`, { resourceType: 'TCP', target: tcp.target });
    expect(moved.status, moved.text).toBe(400);
    expect(moved.json().errors[0].field).toBe('conditions[0]');
  });

  it('conditions with an agent location are accepted: agents receive them (probe protocol 2)', async () => {
    const agent = await ok(call(d, admin, 'POST', '/admin/api/agents', { name: 'edge-1' }));
    const created = await ok(
      call(d, admin, 'POST', '/api/resources', {
        name: 'at-agent',
        resourceType: 'HTTP',
        target: `${base}/up`,
        locations: ['daemon', agent.name],
        conditions: ['[STATUS] == 200'],
      }),
    );
    expect(await ok(call(d, admin, 'GET', `/admin/api/resources/${created.id}`))).toMatchObject({
      locations: ['daemon', agent.name],
      conditions: ['[STATUS] == 200'],
    });
    const { id } = await create('HTTP', `${base}/up`, ['[STATUS] == 200']);
    expect((await ok(call(d, admin, 'PATCH', `/api/resources/${id}`, { locations: [agent.name] }))).locations).toEqual([agent.name]);
  });

  it('more than 32 conditions is a 400 naming conditions', async () => {
    const res = await call(d, admin, 'POST', '/api/resources', {
      name: 'too-many',
      resourceType: 'HTTP',
      target: `${base}/up`,
      conditions: Array.from({ length: 33 }, () => '[STATUS] == 200'),
    });
    expect(res.status, res.text).toBe(400);
    expect(JSON.stringify(res.json().errors)).toContain('conditions');
  });
});

describe('HTTP checks with conditions', () => {
  it('a JSON health endpoint answering 200 {"status":"DOWN"} is NOT_AVAILABLE, CONDITION_FAILED, naming the value seen', async () => {
    const entry = await check('HTTP', `${base}/down`, ['[STATUS] == 200', '[BODY].status == UP']);
    expect(entry).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONDITION_FAILED', message: '[BODY].status (DOWN) == UP' });
    const detail = await ok(call(d, admin, 'GET', `/api/resources/${(await create('HTTP', `${base}/down`, ['[BODY].status == UP'])).id}`));
    expect(detail.conditions).toBeUndefined(); // not on the public detail
  });

  it('all conditions holding is AVAILABLE with the status line, as without conditions', async () => {
    const entry = await check('HTTP', `${base}/up`, [
      '[STATUS] == 200',
      '[BODY].status == UP',
      'len([BODY].items) == 3',
      '[HEADER].X-Version == 2',
    ]);
    expect(entry).toMatchObject({ status: 'AVAILABLE', errorCode: null, message: '200 OK' });
  });

  it('reads gzip, deflate and br bodies', async () => {
    for (const path of ['/gzip', '/deflate', '/br']) {
      expect(await check('HTTP', `${base}${path}`, ['[BODY].status == UP']), path).toMatchObject({ status: 'AVAILABLE' });
    }
  });

  it('a body that does not decode fails with a message that says so', async () => {
    const entry = await check('HTTP', `${base}/bad-gzip`, ['[BODY].status == UP']);
    expect(entry).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONDITION_FAILED' });
    expect(entry.message).toMatch(/^the body could not be decoded \(gzip\)/);
  });

  it('a 5 MiB body, plain or gzip, stops at the 1 MiB cap and fails the condition saying so', async () => {
    for (const path of ['/big', '/big-gzip']) {
      const entry = await check('HTTP', `${base}${path}`, ['[BODY].status == UP']);
      expect(entry, path).toMatchObject({
        status: 'NOT_AVAILABLE',
        errorCode: 'CONDITION_FAILED',
        message: '[BODY].status (INVALID: the body is over the size cap and was not read whole) == UP',
      });
    }
  });

  it('a body that is not JSON fails a JSON path, saying so', async () => {
    const entry = await check('HTTP', `${base}/invalid`, ['[BODY].status == UP']);
    expect(entry).toMatchObject({
      status: 'NOT_AVAILABLE',
      errorCode: 'CONDITION_FAILED',
      message: '[BODY].status (INVALID: the body is not JSON) == UP',
    });
  });

  it('[RESPONSE_TIME] < 300 fails against a first byte 600 ms late', async () => {
    const entry = await check('HTTP', `${base}/slow`, ['[RESPONSE_TIME] < 300']);
    expect(entry).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONDITION_FAILED' });
    const ms = Number(/^\[RESPONSE_TIME\] \((\d+)\) < 300$/.exec(entry.message)?.[1]);
    expect(ms).toBeGreaterThanOrEqual(600);
  });

  it('without [STATUS], a non-2xx answer keeps its code; with it, the conditions decide', async () => {
    expect(await check('HTTP', `${base}/unavailable`, ['[BODY] == down'])).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: '503' });
    expect(await check('HTTP', `${base}/unauthorized`, ['[STATUS] == 401'])).toMatchObject({ status: 'AVAILABLE', errorCode: null });
    expect(await check('HTTP', `${base}/unavailable`, ['[STATUS] == 200'])).toMatchObject({
      status: 'NOT_AVAILABLE',
      errorCode: 'CONDITION_FAILED',
      message: '[STATUS] (503) == 200',
    });
  });
});

describe('TCP checks with conditions', () => {
  it('[CONNECTED], [RESPONSE_TIME] and [IP] are those of the connection', async () => {
    expect(await check('TCP', tcp.target, ['[CONNECTED] == true', '[RESPONSE_TIME] < 60000', '[IP] == 127.0.0.1'])).toMatchObject({
      status: 'AVAILABLE',
      errorCode: null,
    });
    expect(await check('TCP', tcp.target, ['[IP] == 10.0.0.1'])).toMatchObject({
      status: 'NOT_AVAILABLE',
      errorCode: 'CONDITION_FAILED',
      message: '[IP] (127.0.0.1) == 10.0.0.1',
    });
  });
});

describe('resources without conditions behave as the seed says', () => {
  it('2xx is up, another status is its code, no answer is CONNECTION_ERROR', async () => {
    expect(await check('HTTP', `${base}/down`)).toMatchObject({ status: 'AVAILABLE', errorCode: null, message: '200 OK' });
    expect(await check('HTTP', `${base}/unavailable`)).toMatchObject({
      status: 'NOT_AVAILABLE',
      errorCode: '503',
      message: '503 Service Unavailable',
    });
    const closed = await closedPort();
    expect(await check('HTTP', `http://127.0.0.1:${closed}/`)).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONNECTION_ERROR' });
    expect(await check('TCP', tcp.target)).toMatchObject({ status: 'AVAILABLE', errorCode: null });
    expect(await check('TCP', `127.0.0.1:${closed}`)).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONNECTION_ERROR' });
  });
});
