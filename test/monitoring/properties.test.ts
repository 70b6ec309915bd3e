import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { type Caller, call } from './helpers.ts';

/**
 * Generated bodies, valid and invalid, against every POST, PUT and PATCH of
 * the monitoring API: never a 5xx, every 4xx is problem+json naming a field
 * (404 aside), and a refused create leaves no row behind.
 */
const RUNS = 220;

const anything = fc.jsonValue({ maxDepth: 2 });
const maybe = <T>(good: fc.Arbitrary<T>) => fc.oneof({ weight: 4, arbitrary: good }, { weight: 1, arbitrary: anything });
const name = fc.oneof(
  fc.string({ minLength: 1, maxLength: 12 }).map((s) => `n-${s}`),
  fc.constantFrom('', ' ', '\t', 'a\u0000b', 'x'.repeat(201), 'dup'),
  fc.string({ maxLength: 300 }),
);
const target = fc.oneof(
  fc.constantFrom(
    'http://127.0.0.1:9/',
    'https://example.com/x',
    '127.0.0.1:80',
    '[::1]:443',
    'nginx:1.27',
    'ghcr.io/org',
    'localhost:5000/a/b@sha256:' + 'a'.repeat(64),
  ),
  fc.webUrl(),
  fc.tuple(fc.domain(), fc.integer({ min: -1, max: 70000 })).map(([h, p]) => `${h}:${p}`),
  fc.string({ maxLength: 80 }),
  fc.string({ maxLength: 3000 }),
);
const datetime = fc.oneof(
  fc.date({ min: new Date('1990-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString()),
  fc.constantFrom('2030-01-01T00:00:00', '2030-13-01T00:00:00', 'tomorrow', null),
  fc.string(),
);

type Fields = Record<string, fc.Arbitrary<unknown>>;

/** A body: usually an object of the op's fields (any subset, sometimes plus an unknown one), else any JSON or broken text. */
function bodies(fields: Fields): fc.Arbitrary<string> {
  // Every field present half the time, so that valid bodies (and the write paths) come up often enough.
  const object = fc
    .tuple(
      fc.oneof(fc.record(fields), fc.record(fields, { requiredKeys: [] })),
      fc.option(fc.tuple(fc.string({ minLength: 1, maxLength: 8 }), anything), { freq: 5 }),
    )
    .map(([o, extra]) => JSON.stringify(extra && !(extra[0] in fields) ? { ...o, [extra[0]]: extra[1] } : o));
  return fc.oneof(
    { weight: 17, arbitrary: object },
    { weight: 2, arbitrary: anything.map((v) => JSON.stringify(v)) },
    { weight: 1, arbitrary: fc.constantFrom('{', '{"name":', 'nul', '[1,', '\u0000', '') },
  );
}

const resourceFields: Fields = {
  name,
  resourceType: maybe(fc.constantFrom('HTTP', 'DOCKER', 'TCP', 'http', 'FTP')),
  target: maybe(target),
  skipTLS: maybe(fc.boolean()),
  recursive: maybe(fc.boolean()),
  active: maybe(fc.boolean()),
  intervalSeconds: maybe(fc.oneof(fc.integer({ min: -10, max: 100_000 }), fc.double({ noNaN: true }))),
  groupIds: maybe(fc.array(fc.integer({ min: -2, max: 6 }), { maxLength: 4 })),
};
const announcementFields: Fields = {
  kind: maybe(fc.constantFrom('INFORMATION', 'WARNING', 'PROBLEM', 'info')),
  content: maybe(fc.oneof(fc.string(), fc.constantFrom('<script>x</script><p onclick="y">z</p>', '<a href="javascript:alert(1)">a</a>'))),
  active: maybe(fc.boolean()),
  activeUntil: datetime,
};
const groupFields: Fields = { name, visibility: maybe(fc.constantFrom('PUBLIC', 'AUTHENTICATED', 'HIDDEN', 'public')) };
const originFields: Fields = {
  origin: maybe(
    fc.oneof(
      fc.webUrl(),
      fc.webUrl().map((u) => new URL(u).origin),
      fc.constantFrom('*', 'https://a.example/', 'x'),
      fc.string(),
    ),
  ),
};
const credentialFields: Fields = {
  registry: maybe(fc.oneof(fc.domain(), fc.string())),
  username: maybe(fc.string()),
  password: maybe(fc.string()),
};

describe('generated bodies', () => {
  let d: TestDaemon;
  let admin: Caller;
  let resourceId: number;
  let announcementId: number;
  let groupId: number;

  beforeAll(async () => {
    d = await startDaemon();
    admin = { kind: 'key', token: d.adminKey };
    for (const visibility of ['PUBLIC', 'HIDDEN'] as const)
      await d.admin.call(operations.createGroup, { body: { name: `g-${visibility}`, visibility } });
    groupId = (await d.admin.call(operations.createGroup, { body: { name: 'dup', visibility: 'PUBLIC' } })).id;
    resourceId = (
      await d.admin.call(operations.createResource, { body: { name: 'dup', resourceType: 'TCP', target: '127.0.0.1:9', active: false } })
    ).id;
    announcementId = (await d.admin.call(operations.createAnnouncement, { body: { kind: 'WARNING', content: 'x', active: true } })).id;
  });
  afterAll(async () => {
    await d?.stop();
  });

  const counters: Record<string, () => Promise<number>> = {
    resources: async () => (await d.admin.call(operations.listAdminResources)).length,
    groups: async () => (await d.admin.call(operations.listGroups)).length,
    announcements: async () => (await d.admin.call(operations.listAnnouncements)).length,
    origins: async () => (await d.admin.call(operations.listCorsOrigins)).origins.length,
    credentials: async () => (await d.admin.call(operations.listRegistryCredentials)).length,
  };

  const cases: Array<[string, string, () => string, Fields, string | undefined]> = [
    ['createResource', 'POST', () => '/api/resources', resourceFields, 'resources'],
    ['updateResource', 'PATCH', () => `/api/resources/${resourceId}`, resourceFields, undefined],
    ['createAnnouncement', 'POST', () => '/api/announcements', announcementFields, 'announcements'],
    ['replaceAnnouncement', 'PUT', () => `/api/announcements/${announcementId}`, announcementFields, undefined],
    ['createGroup', 'POST', () => '/admin/api/groups', groupFields, 'groups'],
    ['updateGroup', 'PUT', () => `/admin/api/groups/${groupId}`, groupFields, undefined],
    ['addCorsOrigin', 'POST', () => '/admin/api/settings/cors-origins', originFields, undefined],
    ['createRegistryCredential', 'POST', () => '/admin/api/registry-credentials', credentialFields, 'credentials'],
  ];

  for (const [op, method, path, fields, counted] of cases) {
    it(`${op}: no 5xx, 4xx problems name a field, refused creates leave nothing`, async () => {
      await fc.assert(
        fc.asyncProperty(bodies(fields), async (body) => {
          const before = counted ? await counters[counted]() : 0;
          const res = await call(d, admin, method, path(), body);
          expect(res.status, `${res.status} ${res.text} for ${body}`).toBeLessThan(500);
          if (res.status >= 400) {
            expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json/);
            const problem = res.json();
            expect(problem.status).toBe(res.status);
            expect([400, 409, 413, 415], res.text).toContain(res.status);
            if (res.status === 400 || res.status === 409) {
              expect(problem.errors?.length, res.text).toBeGreaterThan(0);
              for (const e of problem.errors) expect(typeof e.field === 'string' && e.field.length > 0).toBe(true);
            }
            if (counted) expect(await counters[counted](), `a refused ${op} left a row: ${body}`).toBe(before);
          }
        }),
        { numRuns: RUNS },
      );
    });
  }
});
