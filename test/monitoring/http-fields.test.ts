import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { makePki, type TestPki } from '../helpers/tls.ts';
import { type Caller, call, closedPort, ok, tcpListener } from './helpers.ts';

// The request fields of a resource (docs/API.md#resource-fields) against a real daemon: what the
// API refuses (400 naming the field), what reads show, PATCH's merge and no-op, and checks that
// send the request against servers on loopback.
let d: TestDaemon;
let admin: Caller;
let web: Server;
let base: string;
let tcp: Awaited<ReturnType<typeof tcpListener>>;
let pki: TestPki;
/** Requests seen, by path. */
const seen = new Map<string, number>();

beforeAll(async () => {
  web = createServer((req, res) => {
    const path = req.url ?? '/';
    seen.set(path, (seen.get(path) ?? 0) + 1);
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      if (path.startsWith('/post-only')) return void res.writeHead(req.method === 'POST' && body === 'ping' ? 200 : 405).end();
      if (path.startsWith('/needs-token')) return void res.writeHead(req.headers['x-token'] === 'open-sesame' ? 200 : 401).end();
      if (path.startsWith('/bearer')) return void res.writeHead(req.headers.authorization === 'Bearer t0k3n' ? 200 : 401).end();
      const code = Number(/^\/status\/(\d{3})/.exec(path)?.[1] ?? 200);
      res.writeHead(code).end('ok');
    });
  });
  await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
  pki = makePki();
  [d, tcp] = await Promise.all([startDaemon(), tcpListener()]);
  admin = { kind: 'key', token: d.adminKey };
});

afterAll(async () => {
  await Promise.all([d?.stop(), tcp?.close()]);
  web?.closeAllConnections();
  await new Promise((r) => web?.close(r));
  pki?.cleanup();
});

let named = 0;
const create = (fields: Record<string, unknown>) =>
  call(d, admin, 'POST', '/api/resources', { name: `fields-${++named}`, resourceType: 'HTTP', target: `${base}/status/200`, ...fields });
const detail = (id: number) => ok(call(d, admin, 'GET', `/admin/api/resources/${id}`));
const patch = (id: number, body: Record<string, unknown>) => call(d, admin, 'PATCH', `/api/resources/${id}`, body);
const checkNow = (id: number) => ok(call(d, admin, 'POST', `/api/resources/${id}/check`));
/** The fields a 400 names. */
async function refused(res: ReturnType<typeof call>): Promise<string[]> {
  const r = await res;
  expect(r.status, r.text).toBe(400);
  return r.json().errors.map((e: { field: string }) => e.field);
}

const SEED_VIEW = {
  method: 'GET',
  headers: {},
  body: null,
  contentType: null,
  auth: null,
  followRedirects: true,
  expectStatus: ['200-299'],
  timeoutSeconds: null,
  upsideDown: false,
  secrets: { headers: [], clientCert: false },
};

describe('a resource created exactly as the seed shows', () => {
  it('reads with the seed defaults; 2xx is up, the error code is the HTTP status or CONNECTION_ERROR', async () => {
    const up = await ok(create({}));
    expect(await detail(up.id)).toMatchObject(SEED_VIEW);
    expect(await checkNow(up.id)).toMatchObject({ status: 'AVAILABLE', errorCode: null });
    const down = await ok(create({ target: `${base}/status/503` }));
    expect(await checkNow(down.id)).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: '503' });
    const closed = await ok(create({ target: `http://127.0.0.1:${await closedPort()}/` }));
    expect(await checkNow(closed.id)).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONNECTION_ERROR' });
  });
});

describe('stored and shown', () => {
  it('reads show the plain fields, expectStatus as strings, secrets only named, the basic username but never the password', async () => {
    const { cert, key } = pki.issue('client-a', 11);
    const created = await ok(
      create({
        method: 'POST',
        headers: { 'X-Plain': 'one' },
        secretHeaders: { 'X-Token': 'shown-never-1' },
        body: '{"ping":true}',
        contentType: 'application/json',
        auth: { type: 'basic', username: 'ops', password: 'shown-never-2' },
        clientCert: cert,
        clientKey: key,
        followRedirects: false,
        expectStatus: [200, '201-204'],
        timeoutSeconds: 5,
        upsideDown: true,
      }),
    );
    const view = await detail(created.id);
    expect(view).toMatchObject({
      method: 'POST',
      headers: { 'X-Plain': 'one' },
      body: '{"ping":true}',
      contentType: 'application/json',
      auth: { type: 'basic', username: 'ops' },
      followRedirects: false,
      expectStatus: ['200', '201-204'],
      timeoutSeconds: 5,
      upsideDown: true,
      secrets: { headers: ['X-Token'], clientCert: true },
    });
    expect(view.auth).toEqual({ type: 'basic', username: 'ops' });
    const list = await ok(call(d, admin, 'GET', '/admin/api/resources'));
    expect(list.find((r: { id: number }) => r.id === created.id)).toMatchObject({ secrets: { headers: ['X-Token'], clientCert: true } });
  });

  it('timeoutSeconds and upsideDown apply to TCP; the HTTP-only fields are a 400 naming them', async () => {
    const r = await ok(create({ resourceType: 'TCP', target: tcp.target, timeoutSeconds: 3, upsideDown: true }));
    expect(await detail(r.id)).toMatchObject({ timeoutSeconds: 3, upsideDown: true, method: 'GET' });
    expect(await refused(create({ resourceType: 'TCP', target: tcp.target, method: 'POST' }))).toEqual(['method']);
    expect(await refused(create({ resourceType: 'TCP', target: tcp.target, secretHeaders: { 'X-A': 'b' } }))).toEqual(['secretHeaders']);
  });
});

describe('what a create refuses, naming the field', () => {
  const big = 'é'.repeat(32 * 1024 + 1); // 32 769 characters, 65 538 UTF-8 bytes
  it.each([
    ['a header name that is not a token', { headers: { 'bad name': 'x' } }, 'headers'],
    [
      'a name in headers and secretHeaders, case-insensitively',
      { headers: { 'X-A': '1' }, secretHeaders: { 'x-a': '2' } },
      'secretHeaders',
    ],
    ['a name given twice', { headers: { 'X-A': '1', 'x-a': '2' } }, 'headers'],
    ['host', { headers: { Host: 'example.test' } }, 'headers'],
    ['transfer-encoding, as a secret', { secretHeaders: { 'Transfer-Encoding': 'chunked' } }, 'secretHeaders'],
    ['content-length', { headers: { 'Content-Length': '3' } }, 'headers'],
    ['an authorization header with auth', { headers: { Authorization: 'x' }, auth: { type: 'bearer', token: 't' } }, 'auth'],
    ['a body on HEAD', { method: 'HEAD', body: 'x' }, 'body'],
    ['a body over 64 KiB in UTF-8', { method: 'POST', body: big }, 'body'],
    ['a content type without a body', { contentType: 'text/plain' }, 'contentType'],
    ['a range that starts after its end', { expectStatus: ['200', '300-200'] }, 'expectStatus[1]'],
  ])('%s', async (_name, fields, field) => {
    expect(await refused(create(fields))).toEqual([field]);
  });

  it('a client certificate without its key, PEM that does not parse, a key of another certificate', async () => {
    const a = pki.issue('client-b', 12);
    const b = pki.issue('client-c', 13);
    expect(await refused(create({ clientCert: a.cert }))).toEqual(['clientKey']);
    expect(await refused(create({ clientKey: a.key }))).toEqual(['clientCert']);
    expect(await refused(create({ clientCert: 'not pem', clientKey: a.key }))).toEqual(['clientCert']);
    expect(
      await refused(create({ clientCert: a.cert, clientKey: '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n' })),
    ).toEqual(['clientKey']);
    expect(await refused(create({ clientCert: a.cert, clientKey: b.key }))).toEqual(['clientKey']);
  });

  it('request fields, timeoutSeconds and upsideDown with an agent location are accepted: agents receive them (probe protocol 2)', async () => {
    const agent = await ok(call(d, admin, 'POST', '/admin/api/agents', { name: 'fields-edge' }));
    await ok(create({ locations: ['daemon', agent.name], secretHeaders: { 'X-A': 'b' } }));
    await ok(create({ locations: [agent.name], timeoutSeconds: 5 }));
    const r = await ok(create({ upsideDown: true }));
    expect(await ok(patch(r.id, { locations: [agent.name] }))).toMatchObject({ locations: [agent.name], upsideDown: true });
  });
});

describe('PATCH', () => {
  it('null removes a field or one header; headers merge by name; the type cannot leave HTTP with HTTP fields set', async () => {
    const r = await ok(create({ headers: { 'X-A': '1', 'X-B': '2' }, secretHeaders: { 'X-S': 's1', 'X-T': 't1' }, timeoutSeconds: 7 }));
    const merged = await ok(patch(r.id, { headers: { 'x-a': null, 'X-C': '3' }, secretHeaders: { 'X-T': null }, timeoutSeconds: null }));
    expect(merged).toMatchObject({ headers: { 'X-B': '2', 'X-C': '3' }, secrets: { headers: ['X-S'] }, timeoutSeconds: null });
    expect(await refused(patch(r.id, { resourceType: 'TCP', target: tcp.target }))).toEqual(['headers']);
    const moved = await ok(patch(r.id, { resourceType: 'TCP', target: tcp.target, headers: null, secretHeaders: null }));
    expect(moved).toMatchObject({ resourceType: 'TCP', ...SEED_VIEW });
    expect(await refused(patch(r.id, { method: 'POST' }))).toEqual(['method']);
  });

  it('checks the merged whole: a key alone against the stored certificate, a header against the stored auth', async () => {
    const a = pki.issue('client-d', 14);
    const r = await ok(create({ clientCert: a.cert, clientKey: a.key, auth: { type: 'bearer', token: 'x' } }));
    expect(await refused(patch(r.id, { clientKey: pki.issue('client-e', 15).key }))).toEqual(['clientKey']);
    expect(await refused(patch(r.id, { clientKey: null }))).toEqual(['clientKey']);
    expect(await refused(patch(r.id, { headers: { Authorization: 'y' } }))).toEqual(['auth']);
    expect(await ok(patch(r.id, { clientCert: null, clientKey: null }))).toMatchObject({ secrets: { clientCert: false } });
  });

  it('a PATCH equal to the stored resource, secrets included, does not reschedule; an edited secret does', async () => {
    const fields = {
      target: `${base}/needs-token/noop`,
      intervalSeconds: 3600,
      secretHeaders: { 'X-Token': 'wrong' },
      auth: { type: 'basic', username: 'u', password: 'p' },
      expectStatus: [401],
    };
    const r = await ok(create(fields));
    await until(() => seen.get('/needs-token/noop') === 1);
    // apply sends every field again, secrets too: nothing changed, so no new check.
    await ok(patch(r.id, { ...fields, expectStatus: ['401'], name: r.name, quorum: 'majority', groupIds: [] }));
    // A fence: a check-now of another resource goes through the same prober after the PATCH's reload.
    const fence = await ok(create({ target: `${base}/status/204`, intervalSeconds: 3600 }));
    await checkNow(fence.id);
    expect(seen.get('/needs-token/noop')).toBe(1);
    // An edit of the secret alone reaches the scheduler: rescheduled at once, the check sends it, 200 is not the 401 expected.
    await ok(patch(r.id, { secretHeaders: { 'X-Token': 'open-sesame' } }));
    await until(async () => (await detail(r.id)).latestErrorCode === '200');
    expect(seen.get('/needs-token/noop')).toBe(2);
  });
});

describe('the check sends the request', () => {
  it('method and body, a secret header, a bearer token; expectStatus and upsideDown decide', async () => {
    const post = await ok(create({ target: `${base}/post-only`, method: 'POST', body: 'ping' }));
    expect(await checkNow(post.id)).toMatchObject({ status: 'AVAILABLE' });
    const token = await ok(create({ target: `${base}/needs-token`, secretHeaders: { 'X-Token': 'open-sesame' } }));
    expect(await checkNow(token.id)).toMatchObject({ status: 'AVAILABLE' });
    const bearer = await ok(create({ target: `${base}/bearer`, auth: { type: 'bearer', token: 't0k3n' } }));
    expect(await checkNow(bearer.id)).toMatchObject({ status: 'AVAILABLE' });
    const gone = await ok(create({ target: `${base}/status/404`, expectStatus: ['404'] }));
    expect(await checkNow(gone.id)).toMatchObject({ status: 'AVAILABLE' });
    const upside = await ok(create({ target: `${base}/status/503`, upsideDown: true }));
    expect(await checkNow(upside.id)).toMatchObject({ status: 'AVAILABLE' });
  });
});

/** Polls `cond` until it holds (a behaviour, not a speed: the margin is the test timeout). */
async function until(cond: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await cond())) await new Promise((r) => setTimeout(r, 25));
}
