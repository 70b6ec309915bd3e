import { describe, expect, it } from 'vitest';
import { expectProblem, fieldsOf } from '../helpers/http.ts';
import { type Caller, call, DATE_TIME, ok, useConformanceWorld } from './helpers.ts';

/**
 * The monitoring seed's rules 1 to 6, its error table and the validation of
 * payloads, against a running daemon. Fields and states are walked in
 * conformance.test.ts, authentication in auth-flow.test.ts.
 */
describe('monitoring seed conformance: rules and errors', () => {
  const w = useConformanceWorld();
  const { create, check } = w;
  const anon: Caller = { kind: 'anonymous' };

  describe('Rules', () => {
    it('1: detail is 404 for a missing resource or one the caller may not see', async () => {
      expectProblem(await call(w.d, anon, 'GET', '/api/resources/987654'), 404);
      const g = await ok(call(w.d, w.admin, 'POST', '/admin/api/groups', { name: 'rule1-auth', visibility: 'AUTHENTICATED' }));
      const r = await create({ name: 'rule1', resourceType: 'HTTP', target: `${w.web.url}/`, groupIds: [g.id] });
      expectProblem(await call(w.d, anon, 'GET', `/api/resources/${r.id}`), 404);
      await ok(call(w.d, w.user, 'GET', `/api/resources/${r.id}`));
    });

    it('2: history is 404 for a missing resource', async () => {
      expectProblem(await call(w.d, w.user, 'GET', '/api/resources/987654/history'), 404);
      expectProblem(await call(w.d, w.admin, 'GET', '/api/resources/987654/history'), 404);
    });

    it('3: GET and PUT of a missing announcement are 404', async () => {
      expectProblem(await call(w.d, anon, 'GET', '/api/announcements/987654'), 404);
      expectProblem(await call(w.d, w.admin, 'PUT', '/api/announcements/987654', { kind: 'WARNING', content: 'x', active: false }), 404);
    });

    it('4: DELETE of a missing id is 404 everywhere', async () => {
      for (const path of [
        '/api/resources/987654',
        '/api/announcements/987654',
        '/admin/api/groups/987654',
        '/admin/api/registry-credentials/987654',
      ]) {
        expectProblem(await call(w.d, w.admin, 'DELETE', path), 404);
      }
    });

    it('5: history pages with limit and before, most recent first, with Link rel=next while more remain', async () => {
      // Inactive: only these five checks write its history.
      const r = await create({ name: 'paged', resourceType: 'TCP', target: w.tcp.target, active: false });
      const ids: number[] = [];
      for (let i = 0; i < 5; i++) ids.push((await check(r.id)).id);
      const page1 = await call(w.d, w.user, 'GET', `/api/resources/${r.id}/history?limit=2`);
      expect(page1.json().map((e: { id: number }) => e.id)).toEqual([ids[4], ids[3]]);
      const next = /^<([^>]+)>; rel="next"$/.exec(String(page1.headers.link))![1];
      const page2 = await call(w.d, w.user, 'GET', next);
      expect(page2.json().map((e: { id: number }) => e.id)).toEqual([ids[2], ids[1]]);
      const page3 = await call(w.d, w.user, 'GET', /^<([^>]+)>/.exec(String(page2.headers.link))![1]);
      expect(page3.json().map((e: { id: number }) => e.id)).toEqual([ids[0]]);
      expect(page3.headers.link).toBeUndefined();
      const all = await call(w.d, w.user, 'GET', `/api/resources/${r.id}/history`);
      expect(all.json()).toHaveLength(5);
      expect(all.headers.link).toBeUndefined();
      for (const bad of ['limit=0', 'limit=1001', 'limit=x', 'before=y']) {
        const p = expectProblem(await call(w.d, w.user, 'GET', `/api/resources/${r.id}/history?${bad}`), 400);
        expect(fieldsOf(p)).toEqual([bad.split('=')[0]]);
      }
    });

    it('6: the resource list is ordered by id ascending and holds active resources only', async () => {
      const off = await create({ name: 'rule6-off', resourceType: 'HTTP', target: `${w.web.url}/`, active: false });
      const list = await ok(call(w.d, anon, 'GET', '/api/resources'));
      const ids = list.map((x: { id: number }) => x.id);
      expect(ids).toEqual([...ids].sort((a: number, b: number) => a - b));
      expect(ids).not.toContain(off.id);
      expect(list.every((x: { active: boolean }) => x.active)).toBe(true);
      expect(await ok(call(w.d, anon, 'GET', `/api/resources/${off.id}`))).toMatchObject({ active: false, currentStatus: 'inactive' });
    });

    it('announcements list newest creation first, active and inactive, and activeUntil in the past reads false', async () => {
      const first = await ok(call(w.d, w.admin, 'POST', '/api/announcements', { kind: 'WARNING', content: 'old', active: false }));
      const second = await ok(
        call(w.d, w.admin, 'POST', '/api/announcements', {
          kind: 'PROBLEM',
          content: 'past',
          active: true,
          activeUntil: '2001-01-01T00:00:00Z',
        }),
      );
      expect(second.active).toBe(false);
      expect(second.activeUntil).toBe('2001-01-01T00:00:00');
      const list = await ok(call(w.d, anon, 'GET', '/api/announcements'));
      const ids = list.map((a: { id: number }) => a.id);
      expect(ids.indexOf(second.id)).toBeLessThan(ids.indexOf(first.id));
      expect(list.find((a: { id: number }) => a.id === first.id).active).toBe(false);
    });
  });

  describe('Errors and validation', () => {
    it('401 anonymous, 403 USER, 404 missing', async () => {
      const body = { name: 'nope', resourceType: 'HTTP', target: 'http://127.0.0.1/' };
      const denied = await call(w.d, anon, 'POST', '/api/resources', body);
      expectProblem(denied, 401);
      expect(denied.headers['www-authenticate']).toMatch(/^Bearer/);
      expectProblem(await call(w.d, anon, 'GET', '/api/resources/1/history'), 401);
      expectProblem(await call(w.d, w.user, 'POST', '/api/resources', body), 403);
      expectProblem(await call(w.d, w.user, 'DELETE', '/api/announcements/1'), 403);
      expectProblem(await call(w.d, w.user, 'POST', '/api/resources/1/check'), 403);
      expectProblem(await call(w.d, w.admin, 'POST', '/api/resources/987654/check'), 404);
      expect((await call(w.d, anon, 'GET', '/api/resources?name=x')).status).toBe(200);
    });

    it('invalid payloads are 400 naming the field; a taken name is 409 naming name', async () => {
      const bad = async (body: unknown, field: string, path = '/api/resources', method = 'POST') => {
        const p = expectProblem(await call(w.d, w.admin, method, path, body), 400);
        expect(fieldsOf(p), JSON.stringify(body)).toContain(field);
      };
      const base = { name: 'valid-name', resourceType: 'HTTP', target: 'http://127.0.0.1/' };
      await bad('{"name":', 'body');
      await bad({ ...base, extra: 1 }, 'extra');
      await bad({ resourceType: 'HTTP', target: 'http://x/' }, 'name');
      await bad({ ...base, resourceType: 'FTP' }, 'resourceType');
      await bad({ ...base, target: 'not a url' }, 'target');
      await bad({ ...base, resourceType: 'TCP', target: '[::1]' }, 'target');
      await bad({ ...base, resourceType: 'DOCKER', target: 'ghcr.io/org/app:v1', recursive: true }, 'target');
      await bad({ ...base, recursive: true }, 'recursive');
      await bad({ ...base, intervalSeconds: 9 }, 'intervalSeconds');
      await bad({ ...base, intervalSeconds: 86401 }, 'intervalSeconds');
      await bad({ ...base, groupIds: [987654] }, 'groupIds');
      await bad({ ...base, skipTLS: 'yes' }, 'skipTLS');
      await bad({ kind: 'NEWS', content: 'x', active: true }, 'kind', '/api/announcements');
      await bad({ kind: 'WARNING', content: 'x', active: true, activeUntil: 'tomorrow' }, 'activeUntil', '/api/announcements');
      await bad({ name: 'g', visibility: 'SECRET' }, 'visibility', '/admin/api/groups');
      expectProblem(await call(w.d, w.admin, 'GET', '/api/resources/abc'), 400);
      await create({ ...base, name: 'taken' });
      const conflict = expectProblem(await call(w.d, w.admin, 'POST', '/api/resources', { ...base, name: 'taken' }), 409);
      expect(fieldsOf(conflict)).toEqual(['name']);
      const other = await create({ ...base, name: 'other' });
      expect(fieldsOf(expectProblem(await call(w.d, w.admin, 'PATCH', `/api/resources/${other.id}`, { name: 'taken' }), 409))).toEqual([
        'name',
      ]);
      await ok(call(w.d, w.admin, 'POST', '/admin/api/groups', { name: 'dup-group', visibility: 'PUBLIC' }));
      expect(
        fieldsOf(expectProblem(await call(w.d, w.admin, 'POST', '/admin/api/groups', { name: 'dup-group', visibility: 'HIDDEN' }), 409)),
      ).toEqual(['name']);
    });

    it('a group with resources cannot be deleted; an empty one can', async () => {
      const g = await ok(call(w.d, w.admin, 'POST', '/admin/api/groups', { name: 'busy', visibility: 'HIDDEN' }));
      const r = await create({ name: 'member', resourceType: 'HTTP', target: `${w.web.url}/`, groupIds: [g.id] });
      expectProblem(await call(w.d, w.admin, 'DELETE', `/admin/api/groups/${g.id}`), 409);
      await ok(call(w.d, w.admin, 'PATCH', `/api/resources/${r.id}`, { groupIds: [] }));
      expect(await ok(call(w.d, w.admin, 'DELETE', `/admin/api/groups/${g.id}`))).toEqual({ status: 'deleted' });
    });

    it('registry credentials never return the password; one per registry', async () => {
      const c = await ok(
        call(w.d, w.admin, 'POST', '/admin/api/registry-credentials', {
          registry: 'Registry.Example.com:5000',
          username: 'bot',
          password: 'hunter2-secret',
        }),
      );
      expect(c).toEqual({
        id: expect.any(Number),
        registry: 'registry.example.com:5000',
        username: 'bot',
        createdAt: expect.stringMatching(DATE_TIME),
      });
      const list = await call(w.d, w.admin, 'GET', '/admin/api/registry-credentials');
      expect(list.text).not.toContain('hunter2');
      expect(list.json()).toEqual([c]);
      expect(
        fieldsOf(
          expectProblem(
            await call(w.d, w.admin, 'POST', '/admin/api/registry-credentials', {
              registry: 'registry.example.com:5000',
              username: 'x',
              password: 'y',
            }),
            409,
          ),
        ),
      ).toEqual(['registry']);
      expect(
        fieldsOf(
          expectProblem(
            await call(w.d, w.admin, 'POST', '/admin/api/registry-credentials', { registry: 'not a host', username: 'x', password: 'y' }),
            400,
          ),
        ),
      ).toEqual(['registry']);
      expect(await ok(call(w.d, w.admin, 'DELETE', `/admin/api/registry-credentials/${c.id}`))).toEqual({ status: 'deleted' });
      // Names of Object.prototype members are plain host names, not lookups into a JS object
      // (`constructor` once reached Object's constructor through the Docker Hub alias table: 500).
      for (const registry of ['constructor', 'toString', '__proto__']) {
        const res = await call(w.d, w.admin, 'POST', '/admin/api/registry-credentials', { registry, username: 'x', password: 'y' });
        expect(res.status, registry).toBeLessThan(500);
      }
    });

    it('exports resources by current status as a Prometheus gauge', async () => {
      const text = (await call(w.d, anon, 'GET', '/actuator/prometheus')).text;
      const list = await ok(call(w.d, w.admin, 'GET', '/admin/api/resources'));
      const value = (status: string) => Number(new RegExp(`^monctl_resources\\{status="${status}"\\} (\\d+)$`, 'm').exec(text)?.[1]);
      // Scheduled checks may move resources between the other statuses meanwhile; the total and inactive hold.
      const statuses = ['available', 'not_available', 'unknown', 'inactive'];
      expect(statuses.map(value).reduce((a, b) => a + b, 0)).toBe(list.length);
      expect(value('inactive')).toBe(list.filter((r: { currentStatus: string }) => r.currentStatus === 'inactive').length);
    });

    it('the OpenAPI document describes every monitoring operation', async () => {
      const doc = await ok(call(w.d, anon, 'GET', '/v3/api-docs'));
      for (const path of [
        '/api/resources',
        '/api/resources/{id}',
        '/api/resources/{id}/check',
        '/api/resources/{id}/history',
        '/api/announcements/{id}',
        '/admin/api/groups/{id}',
        '/admin/api/settings/cors-origins',
        '/api/events',
      ]) {
        expect(doc.paths[path], path).toBeDefined();
      }
    });
  });
});
