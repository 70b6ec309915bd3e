import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { type Caller, call, ok } from './helpers.ts';

type Item = { id: number; name: string };

/**
 * `GET /api/resources` and `GET /admin/api/resources` in pages (`limit`, `after`, `Link`), and
 * whole lists longer than one read chunk (1,000) streamed: the same items either way.
 */
describe('resource lists in pages', () => {
  let d: TestDaemon;
  let admin: Caller;
  let user: Caller;
  const anon: Caller = { kind: 'anonymous' };
  const COUNT = 2_500;

  beforeAll(async () => {
    // Lists only: no scheduled checks of the 2,500 resources competing with the reads.
    d = await startDaemon({ args: ['--scheduler', 'off'] });
    admin = { kind: 'key', token: d.adminKey };
    user = { kind: 'key', token: (await d.admin.call(operations.createApiKey, { body: { name: 'reader', role: 'USER' } })).token };
    const members = await ok(call(d, admin, 'POST', '/admin/api/groups', { name: 'members', visibility: 'AUTHENTICATED' }));
    const hidden = await ok(call(d, admin, 'POST', '/admin/api/groups', { name: 'hidden', visibility: 'HIDDEN' }));
    // Every 5th for members only, every 7th hidden, every 11th inactive; the rest public.
    const items = Array.from({ length: COUNT }, (_, i) => ({
      op: 'create',
      resource: {
        name: `r-${i}`,
        resourceType: 'HTTP',
        target: `http://127.0.0.1:9/${i}`,
        intervalSeconds: 86400,
        active: i % 11 !== 0,
        groupIds: i % 5 === 0 ? [members.id] : i % 7 === 0 ? [hidden.id] : [],
      },
    }));
    await ok(call(d, admin, 'POST', '/admin/api/resources/batch', { items }));
  });
  afterAll(async () => {
    await d?.stop();
  });

  /** Follows `Link: rel="next"` from `path` to the end; the pages' items (id and name: checks run meanwhile) in order. */
  async function walk(caller: Caller, path: string): Promise<{ items: Item[]; pages: number }> {
    const items: Item[] = [];
    let pages = 0;
    for (let next: string | undefined = path; next; pages++) {
      const res = await call(d, caller, 'GET', next);
      expect(res.status, res.text).toBe(200);
      items.push(...(res.json() as Item[]).map(({ id, name }) => ({ id, name })));
      next = /<([^>]+)>;\s*rel="next"/.exec(String(res.headers.link ?? ''))?.[1];
    }
    return { items, pages };
  }

  it('pages the admin list by id with a Link to the next page, and the whole list equals the pages', async () => {
    const streamed = await call(d, admin, 'GET', '/admin/api/resources');
    // Longer than one read chunk: written as it is read, without a length known beforehand.
    expect(streamed.headers['content-length']).toBeUndefined();
    const whole = (streamed.json() as Item[]).map(({ id, name }) => ({ id, name }));
    expect(whole).toHaveLength(COUNT);
    const { items, pages } = await walk(admin, '/admin/api/resources?limit=700');
    expect(pages).toBe(4);
    expect(items).toEqual(whole);
    const ids = whole.map((r) => r.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    // The last page has no Link; a cursor past the end answers an empty array.
    const last = await call(d, admin, 'GET', `/admin/api/resources?limit=10&after=${ids[ids.length - 1]}`);
    expect(last.json()).toEqual([]);
    expect(last.headers.link).toBeUndefined();
    const middle = await ok(call(d, admin, 'GET', `/admin/api/resources?limit=3&after=${ids[99]}`));
    expect(middle.map((r: Item) => r.id)).toEqual(ids.slice(100, 103));
    // `after` alone: the rest of the list, whole.
    const rest = await ok(call(d, admin, 'GET', `/admin/api/resources?after=${ids[1999]}`));
    expect(rest.map((r: Item) => r.id)).toEqual(ids.slice(2000));
  });

  it('keeps the visibility rules in pages and in the whole streamed list', async () => {
    const expected = (shown: (i: number) => boolean) =>
      Array.from({ length: COUNT }, (_, i) => i)
        .filter((i) => i % 11 !== 0 && shown(i))
        .map((i) => `r-${i}`);
    const publicNames = expected((i) => i % 5 !== 0 && !(i % 7 === 0));
    const userNames = expected((i) => i % 5 === 0 || i % 7 !== 0);
    for (const [caller, names] of [
      [anon, publicNames],
      [user, userNames],
      [admin, userNames],
    ] as const) {
      const whole = ((await ok(call(d, caller, 'GET', '/api/resources'))) as Item[]).map(({ id, name }) => ({ id, name }));
      expect(whole.map((r) => r.name)).toEqual(names);
      const { items } = await walk(caller, '/api/resources?limit=500');
      expect(items).toEqual(whole);
      const rest = (await ok(call(d, caller, 'GET', `/api/resources?after=${whole[10].id}`))) as Item[];
      expect(rest.map(({ id, name }) => ({ id, name }))).toEqual(whole.slice(11));
    }
    // A second whole read (a cache would answer it) is the same.
    expect(((await ok(call(d, anon, 'GET', '/api/resources'))) as Item[]).map((r) => r.name)).toEqual(publicNames);
  });

  it('refuses a limit out of 1..10000 and a malformed cursor, naming the field', async () => {
    for (const [query, field] of [
      ['limit=0', 'limit'],
      ['limit=10001', 'limit'],
      ['limit=ten', 'limit'],
      ['limit=5&after=-1', 'after'],
      ['after=abc', 'after'],
    ]) {
      for (const path of ['/api/resources', '/admin/api/resources']) {
        const res = await call(d, admin, 'GET', `${path}?${query}`);
        expect(res.status, `${path}?${query}`).toBe(400);
        expect(res.json().errors[0].field).toBe(field);
      }
    }
  });
});
