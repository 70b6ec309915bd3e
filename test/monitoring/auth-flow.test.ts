import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { expectProblem, login } from '../helpers/http.ts';
import { type Caller, call, headersFor, ok } from './helpers.ts';

const USER_PASSWORD = 'user-password-123';
const ADMIN2_PASSWORD = 'second-admin-pass-1';

/**
 * The seed's decision flow for `/api/**` (steps 1 to 4) for every kind of
 * caller: anonymous, USER and ADMIN; API keys as Bearer, ApiKey and
 * X-API-KEY; sessions with and without the CSRF token.
 */
describe('authentication decision flow of the monitoring API', () => {
  let d: TestDaemon;
  const callers: Record<string, Caller> = {};
  let resourceId: number;

  beforeAll(async () => {
    d = await startDaemon();
    await d.admin.call(operations.createUser, { body: { username: 'uma', password: USER_PASSWORD, role: 'USER' } });
    await d.admin.call(operations.createUser, { body: { username: 'ada', password: ADMIN2_PASSWORD, role: 'ADMIN' } });
    const userKey = await d.admin.call(operations.createApiKey, { body: { name: 'u', role: 'USER' } });
    for (const form of ['bearer', 'apikey', 'x-api-key'] as const) {
      callers[`admin-key-${form}`] = { kind: 'key', token: d.adminKey, form };
      callers[`user-key-${form}`] = { kind: 'key', token: userKey.token, form };
    }
    const adminSession = await login(d.url, 'ada', ADMIN2_PASSWORD);
    const userSession = await login(d.url, 'uma', USER_PASSWORD);
    callers['admin-session'] = { kind: 'session', jar: adminSession.jar, csrf: adminSession.csrf };
    callers['admin-session-no-csrf'] = { kind: 'session', jar: adminSession.jar };
    callers['user-session'] = { kind: 'session', jar: userSession.jar, csrf: userSession.csrf };
    callers.anonymous = { kind: 'anonymous' };
    resourceId = (
      await d.admin.call(operations.createResource, { body: { name: 'auth-target', resourceType: 'TCP', target: '127.0.0.1:9' } })
    ).id;
  });
  afterAll(async () => {
    await d?.stop();
  });

  it('step 1: public endpoints are processed for everyone', async () => {
    for (const [name, caller] of Object.entries(callers)) {
      for (const path of ['/api/resources', `/api/resources/${resourceId}`, '/api/announcements']) {
        expect((await call(d, caller, 'GET', path)).status, `${name} ${path}`).toBe(200);
      }
    }
  });

  it('step 2: protected endpoints without a credential are 401', async () => {
    for (const [method, path] of [
      ['GET', `/api/resources/${resourceId}/history`],
      ['POST', '/api/resources'],
      ['PATCH', `/api/resources/${resourceId}`],
      ['DELETE', `/api/resources/${resourceId}`],
      ['POST', '/api/announcements'],
      ['GET', '/api/events'],
      ['GET', '/admin/api/groups'],
    ]) {
      const res = await call(d, callers.anonymous, method, path, method === 'GET' || method === 'DELETE' ? undefined : {});
      expectProblem(res, 401);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    }
  });

  it('step 3: a credential without the ADMIN role is 403 on ADMIN operations', async () => {
    for (const name of ['user-key-bearer', 'user-key-apikey', 'user-key-x-api-key', 'user-session']) {
      const caller = callers[name];
      expectProblem(await call(d, caller, 'POST', '/api/resources', { name: 'x', resourceType: 'TCP', target: 'h:1' }), 403);
      expectProblem(await call(d, caller, 'DELETE', `/api/resources/${resourceId}`), 403);
      expectProblem(await call(d, caller, 'POST', '/api/announcements', { kind: 'WARNING', content: 'x', active: true }), 403);
      expectProblem(await call(d, caller, 'GET', '/admin/api/groups'), 403);
    }
  });

  it('step 4: USER credentials read history; ADMIN credentials in every form write', async () => {
    for (const name of ['user-key-bearer', 'user-key-apikey', 'user-key-x-api-key', 'user-session']) {
      expect(await ok(call(d, callers[name], 'GET', `/api/resources/${resourceId}/history`)), name).toEqual(expect.any(Array));
    }
    for (const name of ['admin-key-bearer', 'admin-key-apikey', 'admin-key-x-api-key', 'admin-session']) {
      const a = await ok(call(d, callers[name], 'POST', '/api/announcements', { kind: 'INFORMATION', content: name, active: true }));
      expect(a.createdBy, name).toBe(name === 'admin-session' ? 'ada' : 'admin');
      const r = await ok(
        call(d, callers[name], 'POST', '/api/resources', { name: `by-${name}`, resourceType: 'TCP', target: '127.0.0.1:9' }),
      );
      expect(await ok(call(d, callers[name], 'PATCH', `/api/resources/${r.id}`, { intervalSeconds: 10 }))).toMatchObject({
        intervalSeconds: 10,
      });
      expect(await ok(call(d, callers[name], 'DELETE', `/api/resources/${r.id}`))).toEqual({ status: 'deleted' });
    }
  });

  it('a session without the CSRF token is 403 on POST, PUT, PATCH and DELETE, and fine on GET', async () => {
    const caller = callers['admin-session-no-csrf'];
    const a = await ok(call(d, callers['admin-session'], 'POST', '/api/announcements', { kind: 'WARNING', content: 'x', active: true }));
    expect(
      expectProblem(await call(d, caller, 'POST', '/api/announcements', { kind: 'WARNING', content: 'x', active: true }), 403).type,
    ).toMatch(/csrf/);
    expectProblem(await call(d, caller, 'PUT', `/api/announcements/${a.id}`, { kind: 'WARNING', content: 'y', active: true }), 403);
    expectProblem(await call(d, caller, 'PATCH', `/api/resources/${resourceId}`, { intervalSeconds: 20 }), 403);
    expectProblem(await call(d, caller, 'DELETE', `/api/announcements/${a.id}`), 403);
    expect((await call(d, caller, 'GET', `/api/resources/${resourceId}/history`)).status).toBe(200);
    // The announcement survived every refused call.
    expect(await ok(call(d, callers.anonymous, 'GET', `/api/announcements/${a.id}`))).toMatchObject({ content: 'x' });
  });

  it('the event stream takes a session cookie or an API key in any form', async () => {
    for (const name of ['user-session', 'user-key-bearer', 'user-key-apikey', 'user-key-x-api-key', 'admin-session']) {
      const controller = new AbortController();
      const res = await fetch(`${d.url}/api/events`, { headers: headersFor(callers[name]), signal: controller.signal });
      expect(res.status, name).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const reader = res.body!.getReader();
      let text = '';
      while (!text.includes('\n\n')) {
        const { done, value } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      expect(text, name).toMatch(/^id: \d+\nevent: SNAPSHOT\ndata: \{"resources":\[/);
      controller.abort();
      await reader.cancel().catch(() => {});
    }
  });

  it('a wrong CSRF token is refused too', async () => {
    const session = callers['admin-session'];
    if (session.kind !== 'session') throw new Error('admin-session is a session');
    const caller: Caller = { kind: 'session', jar: session.jar, csrf: 'not-the-token' };
    expectProblem(await call(d, caller, 'POST', '/api/announcements', { kind: 'WARNING', content: 'x', active: true }), 403);
  });
});
