import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { bearer, csrfOf, CookieJar, expectProblem, fieldsOf, login, send, type WireResponse } from '../helpers/http.ts';

/** Every error answer of the contract: RFC 9457 problem+json, never an HTML page. */
describe('errors as problem+json', () => {
  let d: TestDaemon;
  let json: Record<string, string>;
  beforeAll(async () => {
    d = await startDaemon();
    json = { ...bearer(d.adminKey), 'content-type': 'application/json' };
  });
  afterAll(async () => {
    await d?.stop();
  });

  const postUser = (body: string, headers = json) => send(d.url, 'POST', '/admin/api/users', { headers, body });
  const noHtml = (res: WireResponse) => {
    expect(String(res.headers['content-type'] ?? '')).not.toMatch(/html/);
    expect(res.text).not.toMatch(/<html|<!doctype|<body|\bat .*\.ts:\d+/i);
  };

  it('400 for invalid JSON, wrong types, unknown fields, missing fields, a non-object body', async () => {
    const cases: Array<[string, string[]]> = [
      ['{"username": "x",', ['body']],
      ['', ['body']],
      ['[]', ['body']],
      ['null', ['body']],
      ['{"username": 42, "password": "long-enough-pw", "role": "USER"}', ['username']],
      ['{"username": "jo", "password": "long-enough-pw", "role": "USER", "extra": 1}', ['extra']],
      ['{"username": "jo", "role": "USER"}', ['password']],
      ['{"username": "jo", "password": "long-enough-pw", "role": "user"}', ['role']],
    ];
    for (const [body, fields] of cases) {
      const problem = expectProblem(await postUser(body), 400, '/admin/api/users');
      expect(problem.type).toBe('urn:monctl:problem:validation');
      expect(fieldsOf(problem), body).toEqual(fields);
      for (const e of problem.errors) expect(e.message).toEqual(expect.any(String));
    }
  });

  it('400 for a path id that is not an integer', async () => {
    for (const id of ['abc', '1.5', '0x10', '1e3', '%201', '99999999999999999999', '1;2']) {
      const res = await send(d.url, 'DELETE', `/admin/api/users/${id}`, { headers: bearer(d.adminKey) });
      const problem = expectProblem(res, 400);
      expect(fieldsOf(problem), id).toEqual(['id']);
    }
    // Nothing was deleted along the way.
    expect((await d.admin.call(operations.listUsers)).map((u) => u.username)).toEqual(['admin']);
  });

  it('400 for malformed percent-encoding, and never HTML', async () => {
    const del = await send(d.url, 'DELETE', '/admin/api/users/%E0%A4%A', { headers: bearer(d.adminKey) });
    expectProblem(del, 400);
    for (const path of [
      '/%E0%A4%A',
      '/api/%E0%A4%A',
      '/admin/api/users/%ZZ',
      '/%',
      '/login/%E0%A4%A',
      '/swagger-ui/%E0%A4%A',
      '/v3/api-docs/%C0%AF',
    ]) {
      const res = await send(d.url, 'GET', path, { headers: bearer(d.adminKey) });
      noHtml(res);
      expect(res.status, path).toBeGreaterThanOrEqual(400);
      expect(res.status, path).toBeLessThan(500);
      expectProblem(res, res.status);
    }
  });

  it('401 without credentials, with WWW-Authenticate: Bearer', async () => {
    const res = await send(d.url, 'GET', '/admin/api/users');
    expect(expectProblem(res, 401, '/admin/api/users').type).toBe('urn:monctl:problem:unauthorized');
    expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
  });

  it('403 for a missing role and for a missing CSRF token', async () => {
    const key = await d.admin.call(operations.createApiKey, { body: { name: 'reader', role: 'USER' } });
    expectProblem(await send(d.url, 'GET', '/admin/api/api-keys', { headers: bearer(key.token) }), 403);
    const { jar } = await login(d.url, 'admin', 'test-admin-password-1');
    const res = await send(d.url, 'POST', '/admin/api/api-keys', {
      headers: { ...jar.header(), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'csrf-less' }),
    });
    expect(expectProblem(res, 403).type).toBe('urn:monctl:problem:csrf');
  });

  it('404 for an unknown route and for a missing id', async () => {
    for (const path of ['/nope', '/api/nope', '/admin/api/nope/1', '/actuator/nope']) {
      const res = await send(d.url, 'GET', path, { headers: bearer(d.adminKey) });
      expect(expectProblem(res, 404, path).type).toBe('urn:monctl:problem:not-found');
    }
    expectProblem(await send(d.url, 'DELETE', '/admin/api/users/424242', { headers: bearer(d.adminKey) }), 404);
    expectProblem(await send(d.url, 'DELETE', '/admin/api/api-keys/424242', { headers: bearer(d.adminKey) }), 404);
    expectProblem(await send(d.url, 'PUT', '/admin/api/users/424242', { headers: json, body: '{"role":"USER"}' }), 404);
  });

  it('405 with Allow for a known path and a wrong method', async () => {
    const res = await send(d.url, 'PATCH', '/admin/api/users', { headers: json, body: '{}' });
    expectProblem(res, 405);
    expect(String(res.headers.allow).split(/,\s*/).sort()).toEqual(['GET', 'POST']);
    const byId = await send(d.url, 'GET', '/admin/api/users/1', { headers: bearer(d.adminKey) });
    expectProblem(byId, 405);
    expect(String(byId.headers.allow).split(/,\s*/).sort()).toEqual(['DELETE', 'PUT']);
    const health = await send(d.url, 'DELETE', '/actuator/health');
    expectProblem(health, 405);
    expect(health.headers.allow).toBe('GET');
    // Pages and files outside the operation table too.
    for (const [method, path, allow] of [
      ['PUT', '/login', 'GET, POST'],
      ['POST', '/actuator/prometheus', 'GET'],
      ['DELETE', '/api', 'GET'],
      ['GET', '/logout', 'POST'],
    ]) {
      const res = await send(d.url, method, path);
      expectProblem(res, 405);
      expect(String(res.headers.allow).split(/,\s*/).sort().join(', '), `${method} ${path}`).toBe(allow);
    }
    // A route that exists for the method but has nothing at that path is a 404.
    expectProblem(await send(d.url, 'GET', '/swagger-ui/nope.js'), 404);
  });

  it('409 for a taken name', async () => {
    const body = JSON.stringify({ username: 'twice', password: 'twice-password', role: 'USER' });
    expect((await postUser(body)).status).toBe(200);
    expect(fieldsOf(expectProblem(await postUser(body), 409))).toEqual(['username']);
  });

  it('413 for a body over 1 MiB, declared or streamed', async () => {
    const big = JSON.stringify({ username: 'big', password: 'x'.repeat(1024 * 1024), role: 'USER' });
    expect(expectProblem(await postUser(big), 413).type).toBe('urn:monctl:problem:payload-too-large');
    const streamed = await send(d.url, 'POST', '/admin/api/users', { headers: json, body: big, chunked: true });
    expectProblem(streamed, 413);
    // Exactly at the limit is read (and then judged on its content).
    const atLimit = `{"username":"a","password":"${'p'.repeat(1024 * 1024 - 48)}","role":"USER"}`;
    expect(Buffer.byteLength(atLimit)).toBeLessThanOrEqual(1024 * 1024);
    expect(fieldsOf(expectProblem(await postUser(atLimit), 400))).toEqual(['password']);
  });

  it('415 for a body that is not JSON', async () => {
    const body = JSON.stringify({ username: 'form', password: 'form-password', role: 'USER' });
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      const res = await postUser(body, { ...bearer(d.adminKey), 'content-type': type });
      expect(expectProblem(res, 415).type).toBe('urn:monctl:problem:unsupported-media-type');
    }
    expectProblem(await postUser(body, bearer(d.adminKey)), 415);
    // No body at all is a missing body.
    expect(fieldsOf(expectProblem(await send(d.url, 'POST', '/admin/api/users', { headers: bearer(d.adminKey) }), 400))).toEqual(['body']);
    // JSON with a charset parameter is JSON.
    expect((await postUser(body, { ...bearer(d.adminKey), 'content-type': 'application/json; charset=utf-8' })).status).toBe(200);
  });

  it('429 for throttled logins', async () => {
    let res: WireResponse | undefined;
    for (let i = 0; i < 6; i++) {
      const jar = new CookieJar();
      const page = await send(d.url, 'GET', '/login');
      jar.store(page);
      res = await send(d.url, 'POST', '/login', {
        headers: { ...jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ username: 'nobody', password: 'wrong', _csrf: csrfOf(page.text) }).toString(),
      });
    }
    expectProblem(res!, 429, '/login');
    expect(res!.headers['retry-after']).toMatch(/^\d+$/);
  });

  it('answers unparseable requests with a problem too, and closes the connection', async () => {
    const port = Number(new URL(d.url).port);
    const raw = (text: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1');
        let out = '';
        socket.on('data', (c) => (out += c));
        socket.on('end', () => resolve(out));
        socket.on('error', reject);
        socket.write(text);
      });
    const badLine = await raw('GET /a b c HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(badLine).toMatch(/^HTTP\/1\.1 400 /);
    expect(badLine).toMatch(/Content-Type: application\/problem\+json/);
    expect(JSON.parse(badLine.split('\r\n\r\n')[1])).toMatchObject({ status: 400, title: 'Bad Request' });
    const hugeHeader = await raw(`GET /api/me HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(hugeHeader).toMatch(/^HTTP\/1\.1 431 /);
    // The daemon is still fine.
    expect((await send(d.url, 'GET', '/actuator/health')).status).toBe(200);
  });

  it('logged no unhandled error (no client input produces a 5xx)', () => {
    const errors = d.logs.filter((l) => typeof l.level === 'number' && l.level >= 50);
    expect(errors).toEqual([]);
  });
});
