import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { send, type WireResponse } from '../helpers/http.ts';
import { agent, api, httpRoute } from './helpers.ts';

/**
 * Property: whatever body an admin endpoint is sent, the daemon answers
 * below 500, a rejection is problem+json naming a field, and a rejected
 * create leaves no row behind.
 */
let d: TestDaemon;
let agentId: number;
let routeId: number;
let userId: number;
beforeAll(async () => {
  d = await startDaemon();
  agentId = await agent(d, 'prop-agent');
  routeId = (await httpRoute(d, 'prop-route', agentId)).id;
  userId = (await api(d, 'POST', '/admin/api/users', { username: 'prop-user', password: 'prop-password-123', role: 'USER' })).json().id;
});
afterAll(async () => {
  await d?.stop();
});

interface Endpoint {
  method: string;
  path: () => string;
  valid: () => Record<string, unknown>;
  list?: string;
}
const endpoints: Record<string, Endpoint> = {
  createAgent: { method: 'POST', path: () => '/admin/api/agents', valid: () => ({ name: 'a-1' }), list: '/admin/api/agents' },
  createRoute: {
    method: 'POST',
    path: () => '/admin/api/routes',
    list: '/admin/api/routes',
    valid: () => ({ name: 'r-1', type: 'HTTP', agentId, hostname: 'r1.test', pathPrefix: '/x', target: 'http://x/', enabled: true }),
  },
  createTcpRoute: {
    method: 'POST',
    path: () => '/admin/api/routes',
    list: '/admin/api/routes',
    valid: () => ({ name: 't-1', type: 'TCP', agentId, listenPort: 1, target: '[::1]:5432' }),
  },
  updateRoute: {
    method: 'PUT',
    path: () => `/admin/api/routes/${routeId}`,
    valid: () => ({ name: 'prop-route', type: 'HTTP', target: 'http://y/' }),
  },
  createUser: {
    method: 'POST',
    path: () => '/admin/api/users',
    valid: () => ({ username: 'u1', password: 'long-password-1', role: 'USER' }),
    list: '/admin/api/users',
  },
  updateUser: { method: 'PUT', path: () => `/admin/api/users/${userId}`, valid: () => ({ role: 'USER' }) },
  createApiKey: {
    method: 'POST',
    path: () => '/admin/api/api-keys',
    valid: () => ({ name: 'k1', role: 'USER', expiresAt: '2099-01-01T00:00:00' }),
    list: '/admin/api/api-keys',
  },
};

/** Hostile values: wrong types, edge numbers, odd strings (control characters, huge, unicode). */
const nasty = fc.oneof(
  fc.jsonValue(),
  fc.string({ unit: 'grapheme', maxLength: 300 }),
  fc.string({ unit: 'binary', maxLength: 50 }),
  fc.constantFrom('', ' ', '\u0000', '../../etc', 'http://', 'x:99999', '-1', '1e400', 'null', '<script>', 'a'.repeat(5000)),
  fc.constantFrom(0, -1, 65536, 2 ** 53, -(2 ** 63), 1.5, Number.MAX_VALUE, true, null, [], {}),
);

/** A body: a valid one with one field replaced, removed or added, or something else entirely. */
function bodies(valid: () => Record<string, unknown>) {
  const keys = Object.keys(valid());
  return fc.oneof(
    fc.record({ key: fc.constantFrom(...keys), value: nasty }).map(({ key, value }) => ({ ...valid(), [key]: value })),
    fc.constantFrom(...keys).map((key) => {
      const b = valid();
      delete b[key];
      return b;
    }),
    fc
      .record({ key: fc.string({ minLength: 1, maxLength: 20 }).filter((k) => !keys.includes(k) && k !== '__proto__'), value: nasty })
      .map(({ key, value }) => ({ ...valid(), [key]: value })),
    nasty,
  );
}

async function count(list: string): Promise<number> {
  return (await api(d, 'GET', list)).json().length;
}

function expectNamedRejection(res: WireResponse, sent: unknown) {
  const context = `${res.status} for ${JSON.stringify(sent)?.slice(0, 300)}: ${res.text.slice(0, 300)}`;
  expect(res.status, context).toBeLessThan(500);
  if (res.status < 400) return;
  expect(String(res.headers['content-type']), context).toMatch(/^application\/problem\+json/);
  const problem = res.json();
  expect(problem.status, context).toBe(res.status);
  if (res.status === 400 || res.status === 409) {
    expect(problem.errors?.length, context).toBeGreaterThan(0);
    for (const e of problem.errors) expect(typeof e.field === 'string' && e.field.length > 0, context).toBe(true);
  }
}

describe('bad input to every admin endpoint', () => {
  for (const [id, ep] of Object.entries(endpoints)) {
    it(`${id}: never 5xx, rejections name a field, rejected creates leave no row`, async () => {
      await fc.assert(
        fc.asyncProperty(bodies(ep.valid), async (body) => {
          const before = ep.list ? await count(ep.list) : 0;
          const res = await api(d, ep.method, ep.path(), JSON.stringify(body));
          expectNamedRejection(res, body);
          if (ep.list && res.status >= 400) expect(await count(ep.list)).toBe(before);
          // Something valid slipped through: remove it so later runs test the same state.
          if (ep.list && res.status === 200 && ep.method === 'POST') {
            expect((await api(d, 'DELETE', `${ep.list}/${res.json().id}`)).status).toBe(200);
          }
        }),
        { numRuns: 60 },
      );
    });
  }

  it('raw bodies that are not JSON objects are 400 naming body, or 415', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 200 }), fc.constantFrom('application/json', 'text/plain', ''), async (text, type) => {
        const headers: Record<string, string> = { 'x-api-key': d.adminKey };
        if (type) headers['content-type'] = type;
        const res = await send(d.url, 'POST', '/admin/api/routes', { headers, body: text });
        expectNamedRejection(res, text);
        expect([400, 415]).toContain(res.status);
      }),
      { numRuns: 60 },
    );
  });

  it('path ids and paging parameters: 400 naming them or 404, never 5xx', async () => {
    const seg = fc.oneof(
      fc.string({ maxLength: 30 }),
      fc.integer().map(String),
      fc.constantFrom('1e3', '-0', '0x1', '99999999999999999999'),
    );
    await fc.assert(
      fc.asyncProperty(seg, seg, seg, async (id, limit, before) => {
        const e = encodeURIComponent;
        for (const path of [
          `/admin/api/agents/${e(id)}`,
          `/admin/api/routes/${e(id)}`,
          `/admin/api/routes/${routeId}/log?limit=${e(limit)}&before=${e(before)}`,
        ]) {
          const res = await api(d, 'GET', path);
          expectNamedRejection(res, path);
        }
      }),
      { numRuns: 60 },
    );
  });
});
