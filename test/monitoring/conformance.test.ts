import { describe, expect, it } from 'vitest';
import { expectProblem } from '../helpers/http.ts';
import { type Caller, call, closedPort, DATE_TIME, ok, useConformanceWorld } from './helpers.ts';

/**
 * The monitoring seed, section by section, against a running daemon: the
 * fields and formats of every object and every row of the state table. Rules
 * and errors are walked in conformance-rules.test.ts, authentication in
 * auth-flow.test.ts.
 */
describe('monitoring seed conformance: fields and states', () => {
  const w = useConformanceWorld();
  const { create, check } = w;
  const anon: Caller = { kind: 'anonymous' };

  describe('Resources and their fields', () => {
    it('a created resource has exactly the seed fields, with their types, and active true', async () => {
      const r = await create({ name: 'fields', resourceType: 'HTTP', target: `${w.web.url}/status/200`, skipTLS: true });
      expect(Object.keys(r).sort()).toEqual(['active', 'createdAt', 'id', 'name', 'recursive', 'resourceType', 'skipTLS', 'target']);
      expect(r).toEqual({
        id: expect.any(Number),
        name: 'fields',
        resourceType: 'HTTP',
        target: `${w.web.url}/status/200`,
        skipTLS: true,
        recursive: false,
        active: true,
        createdAt: expect.stringMatching(DATE_TIME),
      });
      expect(Number.isInteger(r.id)).toBe(true);
      // A list item is that object plus the status fields of the detail (compatible extra fields).
      const [item] = (await ok(call(w.d, anon, 'GET', '/api/resources'))).filter((x: { id: number }) => x.id === r.id);
      const { currentStatus, latestCheckStatus, latestCheckedAt, ...seedFields } = item;
      expect(seedFields).toEqual(r);
      expect(currentStatus).toMatch(/^(available|not_available|unknown)$/);
      expect(latestCheckStatus === null || /^(NOT_)?AVAILABLE$/.test(latestCheckStatus)).toBe(true);
      expect(latestCheckedAt === null || DATE_TIME.test(latestCheckedAt)).toBe(true);
    });

    it('detail adds groups sorted by id, the legacy groupId/groupName of the first, and null latest fields before a check', async () => {
      const b = await ok(call(w.d, w.admin, 'POST', '/admin/api/groups', { name: 'detail-b', visibility: 'PUBLIC' }));
      const a = await ok(call(w.d, w.admin, 'POST', '/admin/api/groups', { name: 'detail-a', visibility: 'AUTHENTICATED' }));
      expect(b).toEqual({
        id: expect.any(Number),
        name: 'detail-b',
        visibility: 'PUBLIC',
        createdAt: expect.stringMatching(DATE_TIME),
        updatedAt: expect.stringMatching(DATE_TIME),
      });
      // Inactive, so that no scheduled check fills the latest fields before we look.
      const r = await create({ name: 'detail', resourceType: 'TCP', target: w.tcp.target, groupIds: [a.id, b.id], active: false });
      const detail = await ok(call(w.d, anon, 'GET', `/api/resources/${r.id}`));
      expect(Object.keys(detail).sort()).toEqual([
        'active',
        'createdAt',
        'currentStatus',
        'groupId',
        'groupName',
        'groups',
        'id',
        'latestCheckStatus',
        'latestCheckedAt',
        'latestErrorCode',
        'latestMessage',
        'name',
        'recursive',
        'resourceType',
        'skipTLS',
        'target',
      ]);
      expect(detail).toMatchObject({
        ...r,
        groupId: b.id,
        groupName: 'detail-b',
        groups: [
          { id: b.id, name: 'detail-b' },
          { id: a.id, name: 'detail-a' },
        ],
        currentStatus: 'inactive',
        latestCheckStatus: null,
        latestCheckedAt: null,
        latestMessage: null,
        latestErrorCode: null,
      });
      await ok(call(w.d, w.admin, 'PATCH', `/api/resources/${r.id}`, { active: true }));
      const entry = await check(r.id);
      const after = await ok(call(w.d, anon, 'GET', `/api/resources/${r.id}`));
      expect(after).toMatchObject({
        currentStatus: 'available',
        latestCheckStatus: 'AVAILABLE',
        latestCheckedAt: expect.stringMatching(DATE_TIME),
        latestMessage: entry.message,
        latestErrorCode: null,
      });
      expect(after.latestCheckedAt).toMatch(DATE_TIME);
    });

    it('a history entry has id, status, message, errorCode, checkedAt and durationMs (and location, issue 19)', async () => {
      const r = await create({ name: 'history-fields', resourceType: 'HTTP', target: `${w.web.url}/status/204` });
      const entry = await check(r.id);
      expect(Object.keys(entry).sort()).toEqual(['checkedAt', 'durationMs', 'errorCode', 'id', 'location', 'message', 'status']);
      expect(entry).toEqual({
        id: expect.any(Number),
        status: 'AVAILABLE',
        message: expect.stringMatching(/^204\b/),
        errorCode: null,
        checkedAt: expect.stringMatching(DATE_TIME),
        durationMs: expect.any(Number),
        location: 'daemon',
      });
      expect(await ok(call(w.d, w.user, 'GET', `/api/resources/${r.id}/history`))).toContainEqual(entry);
    });

    it('PATCH and the admin views carry intervalSeconds; the admin list shows inactive and hidden resources', async () => {
      const hidden = await ok(call(w.d, w.admin, 'POST', '/admin/api/groups', { name: 'admin-hidden', visibility: 'HIDDEN' }));
      const r = await create({
        name: 'admin-view',
        resourceType: 'HTTP',
        target: `${w.web.url}/`,
        intervalSeconds: 30,
        groupIds: [hidden.id],
        active: false,
      });
      expectProblem(await call(w.d, w.admin, 'GET', `/api/resources/${r.id}`), 404);
      const one = await ok(call(w.d, w.admin, 'GET', `/admin/api/resources/${r.id}`));
      expect(one).toMatchObject({
        id: r.id,
        intervalSeconds: 30,
        active: false,
        currentStatus: 'inactive',
        groups: [{ id: hidden.id, name: 'admin-hidden' }],
      });
      const all = await ok(call(w.d, w.admin, 'GET', '/admin/api/resources'));
      // The list carries the detail's fields except its recent incidents (issue 15) and results per location (issue 19).
      const { incidents, locationResults, ...listed } = one;
      expect(incidents).toEqual([]);
      expect(locationResults).toEqual([expect.objectContaining({ location: 'daemon', status: 'unknown' })]);
      expect(all.find((x: { id: number }) => x.id === r.id)).toEqual(listed);
      const patched = await ok(call(w.d, w.admin, 'PATCH', `/api/resources/${r.id}`, { intervalSeconds: 120, active: true, groupIds: [] }));
      expect(patched).toMatchObject({
        intervalSeconds: 120,
        active: true,
        currentStatus: 'unknown',
        groups: [],
        groupId: null,
        groupName: null,
      });
      expect(await ok(call(w.d, anon, 'GET', `/api/resources/${r.id}`))).toMatchObject({ id: r.id, active: true });
      expectProblem(await call(w.d, w.user, 'GET', '/admin/api/resources'), 403);
      expectProblem(await call(w.d, w.admin, 'GET', '/admin/api/resources/999999'), 404);
    });
  });

  describe('States and transitions', () => {
    it('HTTP 2xx gives AVAILABLE and an entry', async () => {
      const r = await create({ name: 'http-200', resourceType: 'HTTP', target: `${w.web.url}/status/200` });
      expect(await check(r.id)).toMatchObject({ status: 'AVAILABLE', errorCode: null, message: '200 OK' });
    });

    it('HTTP other status gives NOT_AVAILABLE with the code as text and the status line as message', async () => {
      const r = await create({ name: 'http-503', resourceType: 'HTTP', target: `${w.web.url}/status/503` });
      expect(await check(r.id)).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: '503', message: '503 Service Unavailable' });
      expect(await ok(call(w.d, anon, 'GET', `/api/resources/${r.id}`))).toMatchObject({
        currentStatus: 'not_available',
        latestCheckStatus: 'NOT_AVAILABLE',
        latestErrorCode: '503',
        latestMessage: '503 Service Unavailable',
      });
      const r3 = await create({ name: 'http-302', resourceType: 'HTTP', target: `${w.web.url}/status/404` });
      expect(await check(r3.id)).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: '404' });
    });

    it('HTTP connection error gives NOT_AVAILABLE with CONNECTION_ERROR', async () => {
      const r = await create({ name: 'http-refused', resourceType: 'HTTP', target: `http://127.0.0.1:${await closedPort()}/` });
      expect(await check(r.id)).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONNECTION_ERROR', message: expect.any(String) });
    });

    it('TCP: an open port is AVAILABLE, a closed one NOT_AVAILABLE', async () => {
      const up = await create({ name: 'tcp-up', resourceType: 'TCP', target: w.tcp.target });
      expect(await check(up.id)).toMatchObject({ status: 'AVAILABLE', errorCode: null });
      const down = await create({ name: 'tcp-down', resourceType: 'TCP', target: `127.0.0.1:${await closedPort()}` });
      expect(await check(down.id)).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONNECTION_ERROR' });
    });

    it('DOCKER: an unreachable registry gives NOT_AVAILABLE with DOCKER_ERROR', async () => {
      const r = await create({ name: 'docker-down', resourceType: 'DOCKER', target: `127.0.0.1:${await closedPort()}/team/app:1.0` });
      expect(await check(r.id)).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'DOCKER_ERROR' });
    });

    it('DELETE of a resource removes it and its history', async () => {
      const r = await create({ name: 'doomed', resourceType: 'HTTP', target: `${w.web.url}/` });
      await check(r.id);
      expect(await ok(call(w.d, w.admin, 'DELETE', `/api/resources/${r.id}`))).toEqual({ status: 'deleted' });
      expectProblem(await call(w.d, w.admin, 'GET', `/api/resources/${r.id}/history`), 404);
      expectProblem(await call(w.d, w.admin, 'GET', `/admin/api/resources/${r.id}`), 404);
      expectProblem(await call(w.d, w.admin, 'DELETE', `/api/resources/${r.id}`), 404);
    });

    it('PUT of an announcement replaces its fields and keeps createdBy and createdAt; DELETE removes it', async () => {
      const a = await ok(call(w.d, w.admin, 'POST', '/api/announcements', { kind: 'INFORMATION', content: '<p>hello</p>', active: true }));
      expect(Object.keys(a).sort()).toEqual(['active', 'activeUntil', 'content', 'createdAt', 'createdBy', 'id', 'kind', 'updatedAt']);
      expect(a).toEqual({
        id: expect.any(Number),
        kind: 'INFORMATION',
        content: '<p>hello</p>',
        createdBy: 'admin',
        active: true,
        activeUntil: null,
        createdAt: expect.stringMatching(DATE_TIME),
        updatedAt: expect.stringMatching(DATE_TIME),
      });
      const until = '2999-01-02T03:04:05';
      const put = await ok(
        call(w.d, w.admin, 'PUT', `/api/announcements/${a.id}`, {
          kind: 'PROBLEM',
          content: '<b>down</b>',
          active: true,
          activeUntil: until,
        }),
      );
      expect(put).toEqual({
        ...a,
        kind: 'PROBLEM',
        content: '<b>down</b>',
        activeUntil: until,
        updatedAt: expect.stringMatching(DATE_TIME),
      });
      expect(await ok(call(w.d, anon, 'GET', `/api/announcements/${a.id}`))).toEqual(put);
      expect(await ok(call(w.d, w.admin, 'DELETE', `/api/announcements/${a.id}`))).toEqual({ status: 'deleted' });
      expectProblem(await call(w.d, anon, 'GET', `/api/announcements/${a.id}`), 404);
    });
  });
});
