import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { expectProblem, send } from '../helpers/http.ts';
import { type Caller, call, ok } from './helpers.ts';

const PATH = '/admin/api/settings/cors-origins';

/**
 * Walkthrough finding (issue 13): `cors add` echoed the origin as typed while
 * the daemon stored another spelling. Adding returns the canonical origin;
 * removing and matching find it under any spelling.
 */
describe('CORS origins are canonical', () => {
  let d: TestDaemon;
  let admin: Caller;
  beforeAll(async () => {
    d = await startDaemon();
    admin = { kind: 'key', token: d.adminKey };
  });
  afterAll(async () => {
    await d?.stop();
  });

  const remove = (origin: string) => call(d, admin, 'DELETE', `${PATH}?origin=${encodeURIComponent(origin)}`);

  it('stores and returns the canonical form of upper case, default and zero-padded ports', async () => {
    for (const [sent, stored] of [
      ['HTTPS://Example.COM:443', 'https://example.com'],
      ['Http://LOCALHOST:80', 'http://localhost'],
      ['https://Example.com:8443', 'https://example.com:8443'],
      ['http://127.0.0.1:08080', 'http://127.0.0.1:8080'],
      ['HTTPS://[::1]:443', 'https://[::1]'],
    ] as const) {
      const added = await ok(call(d, admin, 'POST', PATH, { origin: sent }));
      expect(added.origin, sent).toBe(stored);
      expect(added.origins).toContain(stored);
      expect(added.origins).not.toContain(sent);
      // The same origin spelt another way is the same entry.
      expect((await ok(call(d, admin, 'POST', PATH, { origin: stored }))).origins.filter((o: string) => o === stored)).toHaveLength(1);
    }
    expect((await ok(call(d, admin, 'GET', PATH))).origins).toEqual([
      'http://127.0.0.1:8080',
      'http://localhost',
      'https://[::1]',
      'https://example.com',
      'https://example.com:8443',
    ]);
  });

  it('a browser sending the canonical origin is matched; a hand-written spelling of it too', async () => {
    await ok(call(d, admin, 'POST', PATH, { origin: 'HTTPS://App.Example.ORG:443' }));
    for (const sent of ['https://app.example.org', 'HTTPS://APP.example.org:443']) {
      const res = await send(d.url, 'GET', '/api/resources', { headers: { origin: sent } });
      expect(res.headers['access-control-allow-origin'], sent).toBe(sent);
    }
    const other = await send(d.url, 'GET', '/api/resources', { headers: { origin: 'https://app.example.org:8443' } });
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('DELETE finds the canonical entry under a non-canonical spelling', async () => {
    await ok(call(d, admin, 'POST', PATH, { origin: 'https://remove.example.net' }));
    expect((await remove('HTTPS://Remove.Example.NET:443/')).json()).toEqual({ status: 'deleted' });
    expect((await ok(call(d, admin, 'GET', PATH))).origins).not.toContain('https://remove.example.net');
    expectProblem(await remove('https://remove.example.net'), 404);
  });

  it('still refuses what is not scheme://host[:port], with the reason', async () => {
    for (const [bad, reason] of [
      ['HTTPS://Example.COM:443/', /must not end with a slash: use https:\/\/example\.com$/],
      ['https://example.com/app', /path/],
      ['https://example.com?x=1', /query/],
      ['https://user@example.com', /user information/],
      ['example.com', /scheme/],
      ['https://*.example.com', /wildcard/],
      ['https://example.com:70000', /port/],
    ] as const) {
      const p = expectProblem(await call(d, admin, 'POST', PATH, { origin: bad }), 400);
      expect(p.errors, bad).toEqual([{ field: 'origin', message: expect.stringMatching(reason) }]);
    }
  });
});
