import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { startDaemon, type StartOptions, type TestDaemon } from '../helpers/daemon.ts';
import { until } from '../helpers/http.ts';
import { SeedDb } from './seed-db.ts';

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;
export const USER = { username: 'viewer', password: 'viewer-password-1' };

/** An HTTP target whose answer the test sets: `/<name>` answers `codes.get(name) ?? 200`. */
export async function switchableTarget() {
  const codes = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    res.writeHead(codes.get((req.url ?? '/').slice(1)) ?? 200, { connection: 'close' }).end('ok');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: (name: string) => `http://127.0.0.1:${(server.address() as AddressInfo).port}/${name}`,
    set: (name: string, code: number) => void codes.set(name, code),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export interface StatusWorld {
  d: TestDaemon;
  target: Awaited<ReturnType<typeof switchableTarget>>;
  seed: SeedDb;
  groups: { website: number; internal: number; secret: number };
  /** web, api (Website and Secret), cdn (Website), wiki and ci (Internal tools), vault (Secret). */
  ids: Record<'web' | 'api' | 'cdn' | 'wiki' | 'ci' | 'vault', number>;
  page: { id: number; slug: string };
  /** The open incident (wiki) and the active maintenance window (cdn). */
  openIncident: number;
  now: number;
}

/**
 * The page the checks describe: 3 groups of mixed visibility
 * (Website PUBLIC, Internal tools AUTHENTICATED, Secret HIDDEN), an
 * announcement of each kind, an open incident (wiki, AUTHENTICATED, down for real), a
 * maintenance window in progress (cdn) and one upcoming, and 90 days of
 * rollups for web. Anonymous visitors: Website only, banner MAINTENANCE;
 * logged in: also Internal tools, banner PARTIAL_OUTAGE (wiki is down).
 */
export async function makeStatusWorld(opts: StartOptions = {}): Promise<StatusWorld> {
  const [d, target] = await Promise.all([startDaemon(opts), switchableTarget()]);
  const a = d.admin;
  await a.call(operations.createUser, { body: { ...USER, role: 'USER' } });
  const group = async (name: string, visibility: 'PUBLIC' | 'AUTHENTICATED' | 'HIDDEN') =>
    (await a.call(operations.createGroup, { body: { name, visibility } })).id;
  const groups = {
    website: await group('Website', 'PUBLIC'),
    internal: await group('Internal tools', 'AUTHENTICATED'),
    secret: await group('Secret', 'HIDDEN'),
  };
  const resource = async (name: string, groupIds: number[]) =>
    (
      await a.call(operations.createResource, {
        body: { name, resourceType: 'HTTP', target: target.url(name), intervalSeconds: 3600, groupIds },
      })
    ).id;
  const ids = {
    web: await resource('web', [groups.website]),
    api: await resource('api', [groups.website, groups.secret]),
    cdn: await resource('cdn', [groups.website]),
    wiki: await resource('wiki', [groups.internal]),
    ci: await resource('ci', [groups.internal]),
    vault: await resource('vault', [groups.secret]),
  };
  // Every resource checked once (new resources are due at once).
  await until(async () => (await a.call(operations.listAdminResources)).every((r) => r.latestCheckedAt !== null));
  for (const [kind, text] of [
    ['INFORMATION', 'New <a href="https://example.com/r">region</a> opened'],
    ['WARNING', 'Slow <b>builds</b> today'],
    ['PROBLEM', 'E-mail delivery is delayed'],
  ] as const) {
    await a.call(operations.createAnnouncement, { body: { kind, content: `<p>${text}</p>`, active: true } });
  }
  await a.call(operations.createAnnouncement, { body: { kind: 'PROBLEM', content: '<p>An old problem, over</p>', active: false } });

  // wiki goes down for real: three failing checks (the default failureThreshold) open its incident.
  target.set('wiki', 503);
  for (let i = 0; i < 3; i++) await a.call(operations.checkResource, { params: { id: ids.wiki } });
  const now = Date.now();
  const seed = await SeedDb.open(d);
  const open = await a.call(operations.listIncidents, { query: { resourceId: ids.wiki, state: 'open' } });
  if (open.length !== 1) throw new Error('three failing checks opened no incident for wiki');
  const openIncident = open[0].id;
  // web: 100 % except 10 days ago (97.2 %) and 3 days ago (99.5 %); one hour at 50 %; nothing before 60 days ago.
  await seed.rollups(
    ids.web,
    (ago) => (ago > 60 ? undefined : ago === 10 ? [1440, 1400] : ago === 3 ? [1440, 1433] : [1440, 1440]),
    (ago) => (ago === 5 ? [60, 30] : [60, 60]),
    now,
  );
  await seed.incident(ids.web, now - 10 * DAY, now - 10 * DAY + 45 * 60_000, '503 Service Unavailable', false, '503');
  const at = (ms: number) => new Date(ms).toISOString();
  await a.call(operations.createMaintenanceWindow, {
    body: { name: 'CDN provider upgrade', kind: 'ONE_OFF', startsAt: at(now - HOUR), endsAt: at(now + 2 * HOUR), resourceIds: [ids.cdn] },
  });
  await a.call(operations.createMaintenanceWindow, {
    body: {
      name: 'Database failover drill',
      kind: 'ONE_OFF',
      startsAt: at(now + 2 * DAY),
      endsAt: at(now + 2 * DAY + HOUR),
      groupIds: [groups.internal],
    },
  });

  const page = await a.call(operations.createStatusPage, {
    body: {
      slug: 'main',
      title: 'Example Corp status',
      description: 'Live status of our public services',
      groupIds: [groups.website, groups.internal, groups.secret],
      footer: 'Questions? ops@example.com',
    },
  });
  return { d, target, seed, groups, ids, page: { id: page.id, slug: page.slug }, openIncident, now };
}

/** The world for one test file, started in beforeAll and stopped in afterAll. */
export function useStatusWorld(opts: StartOptions = {}): () => StatusWorld {
  let w: StatusWorld | undefined;
  beforeAll(async () => {
    w = await makeStatusWorld(opts);
  }, 60_000);
  afterAll(async () => {
    await w?.seed.close();
    await Promise.all([w?.d.stop(), w?.target.close()]);
  });
  return () => {
    if (!w) throw new Error('useStatusWorld: used before beforeAll ran');
    return w;
  };
}
