import { EventSource } from 'eventsource';
import { describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { login, until } from '../helpers/http.ts';
import { onPostgres, openDb, queryDb } from '../helpers/test-database.ts';
import { useStatusWorld, USER } from './world.ts';

interface Frame {
  kind: string;
  data: { overall?: { state: string }; resources: Array<{ id: number; status: string; label: string }> };
}

function follow(url: string, headers: Record<string, string> = {}) {
  const frames: Frame[] = [];
  const source = new EventSource(url, {
    fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } }),
  });
  for (const kind of ['SNAPSHOT', 'PAGE_CHANGED'])
    source.addEventListener(kind, (e) => frames.push({ kind, data: JSON.parse((e as MessageEvent).data) }));
  const opened = new Promise<void>((resolve, reject) => {
    source.addEventListener('SNAPSHOT', () => resolve());
    source.onerror = (err) => reject(new Error(`stream failed: ${String((err as { message?: string }).message)}`));
  });
  return { frames, opened, close: () => source.close() };
}

/** `/api/status-pages/{slug}/events`: what changes on the page, for what the subscriber may see. */
describe('status page: the live stream', () => {
  const world = useStatusWorld();

  it('starts with a snapshot of what the visitor sees, then sends status changes of those resources only', async () => {
    const { d, ids, target } = world();
    const url = `${d.url}/api/status-pages/main/events`;
    const anonymous = follow(url);
    const { jar } = await login(d.url, USER.username, USER.password);
    const viewer = follow(url, jar.header());
    try {
      await Promise.all([anonymous.opened, viewer.opened]);
      const snap = anonymous.frames[0].data;
      expect(snap.overall?.state).toBe('MAINTENANCE');
      expect(snap.resources.map((r) => r.id).sort((a, b) => a - b)).toEqual([ids.web, ids.api, ids.cdn].sort((a, b) => a - b));
      expect(viewer.frames[0].data.resources.map((r) => r.id)).toContain(ids.wiki);

      // ci (AUTHENTICATED) goes down, then web (PUBLIC): the anonymous stream hears of web only.
      target.set('ci', 503);
      await d.admin.call(operations.checkResource, { params: { id: ids.ci } });
      await until(() =>
        viewer.frames.some((f) => f.kind === 'PAGE_CHANGED' && f.data.resources.some((r) => r.id === ids.ci && r.status === 'down')),
      );
      target.set('web', 503);
      await d.admin.call(operations.checkResource, { params: { id: ids.web } });
      await until(() => anonymous.frames.some((f) => f.kind === 'PAGE_CHANGED'));
      const changes = anonymous.frames.filter((f) => f.kind === 'PAGE_CHANGED');
      expect(changes.flatMap((f) => f.data.resources)).toEqual([{ id: ids.web, status: 'down', label: 'Down' }]);
      await until(() => viewer.frames.some((f) => f.data.resources.some((r) => r.id === ids.web && r.status === 'down')));
    } finally {
      anonymous.close();
      viewer.close();
      target.set('web', 200);
      target.set('ci', 200);
      await d.admin.call(operations.checkResource, { params: { id: ids.web } });
      await d.admin.call(operations.checkResource, { params: { id: ids.ci } });
    }
  });

  it('changes the banner when an incident opens and resolves (three failing checks, then one good one)', async () => {
    const { d, ids, target } = world();
    const anonymous = follow(`${d.url}/api/status-pages/main/events`);
    try {
      await anonymous.opened;
      expect(anonymous.frames[0].data.overall?.state).toBe('MAINTENANCE');
      target.set('web', 503);
      for (let i = 0; i < 3; i++) await d.admin.call(operations.checkResource, { params: { id: ids.web } });
      await until(() => anonymous.frames.some((f) => f.data.overall?.state === 'PARTIAL_OUTAGE'));
      target.set('web', 200);
      await d.admin.call(operations.checkResource, { params: { id: ids.web } });
      await until(() => anonymous.frames.at(-1)!.data.overall?.state === 'MAINTENANCE');
      expect(anonymous.frames.map((f) => f.data.overall?.state).filter(Boolean)).toEqual(['MAINTENANCE', 'PARTIAL_OUTAGE', 'MAINTENANCE']);
    } finally {
      anonymous.close();
      target.set('web', 200);
    }
  });

  // A refresh of the watched pages that read a page while its first subscriber's snapshot was still
  // being read found no baseline, and sent the whole page again as a PAGE_CHANGED. PostgreSQL only:
  // its pool runs both reads at once (SQLite's one connection runs them in turn, the snapshot first).
  // Each round holds the snapshot back with a lock on `groups`, lets a refresh queue behind it, then
  // lets both go. No status moves, so no stream may hear of any change.
  it.runIf(onPostgres())('sends no change after the snapshot when a refresh reads the page while its first snapshot is read', async () => {
    const { d, groups } = world();
    const db = await openDb(d);
    const waiting = async () =>
      (
        await queryDb<{ n: number }>(
          d,
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
        )
      )[0].n;
    const heard: string[] = [];
    const pages = [];
    for (let round = 0; round < 12; round++)
      pages.push(
        await d.admin.call(operations.createStatusPage, { body: { slug: `race-${round}`, title: 'Race', groupIds: [groups.website] } }),
      );
    // Read by every refresh after the race pages (pages are read in order of id): the refresh queues behind the lock here if not before.
    const watched = await d.admin.call(operations.createStatusPage, {
      body: { slug: 'watched', title: 'Watched', groupIds: [groups.website] },
    });
    const watcher = follow(`${d.url}/api/status-pages/${watched.slug}/events`);
    try {
      await watcher.opened;
      for (const page of pages) {
        const round = page.slug;
        let stream: ReturnType<typeof follow> | undefined;
        await db.transaction(async () => {
          await db.query('LOCK TABLE groups IN ACCESS EXCLUSIVE MODE');
          stream = follow(`${d.url}/api/status-pages/${page.slug}/events`);
          await until(async () => (await waiting()) >= 1);
          await d.admin.call(operations.createStatusPage, { body: { slug: `dirt-${round}`, title: 'Dirt' } });
          await until(async () => (await waiting()) >= 2);
        });
        try {
          await stream!.opened;
          // A frame queued while the snapshot was read is written right behind it.
          await new Promise((r) => setTimeout(r, 50));
          for (const f of stream!.frames.slice(1)) heard.push(`${page.slug}: ${f.kind} ${JSON.stringify(f.data.resources)}`);
        } finally {
          stream!.close();
        }
      }
    } finally {
      watcher.close();
      await db.close();
    }
    expect(heard).toEqual([]);
  });

  // The diff baseline of a page's channel outlived its readers: a status change while nobody watched left it
  // behind, and the next reader got a PAGE_CHANGED repeating what its SNAPSHOT had just said.
  it('sends a new reader no change that its snapshot already showed, after the last reader left', async () => {
    const { d, ids, target } = world();
    const url = `${d.url}/api/status-pages/main/events`;
    const openStreams = async () =>
      Number(
        /^monctl_status_streams_open (\d+)$/m.exec(
          await (await fetch(`${d.url}/actuator/prometheus`, { headers: { authorization: `Bearer ${d.adminKey}` } })).text(),
        )?.[1],
      );
    // A logged-in reader throughout: its frames show when a refresh has passed over the anonymous channel too.
    const { jar } = await login(d.url, USER.username, USER.password);
    const sentinel = follow(url, jar.header());
    const first = follow(url);
    let second: ReturnType<typeof follow> | undefined;
    try {
      await Promise.all([sentinel.opened, first.opened]);
      target.set('web', 503);
      await d.admin.call(operations.checkResource, { params: { id: ids.web } });
      await until(() => first.frames.some((f) => f.data.resources.some((r) => r.id === ids.web && r.status === 'down')));
      const open = await openStreams();
      first.close();
      await until(async () => (await openStreams()) < open);
      target.set('web', 200);
      await d.admin.call(operations.checkResource, { params: { id: ids.web } });
      await until(() =>
        sentinel.frames.some((f) => f.kind === 'PAGE_CHANGED' && f.data.resources.some((r) => r.id === ids.web && r.status === 'up')),
      );
      second = follow(url);
      await second.opened;
      expect(second.frames[0].data.resources.find((r) => r.id === ids.web)?.status).toBe('up');
      // Any refresh now (ci is the logged-in reader's only): the anonymous channel is read first.
      target.set('ci', 503);
      await d.admin.call(operations.checkResource, { params: { id: ids.ci } });
      await until(() => sentinel.frames.some((f) => f.data.resources.some((r) => r.id === ids.ci && r.status === 'down')));
      expect(second.frames.slice(1).map((f) => `${f.kind} ${JSON.stringify(f.data.resources)}`)).toEqual([]);
    } finally {
      first.close();
      second?.close();
      sentinel.close();
      target.set('web', 200);
      target.set('ci', 200);
      await d.admin.call(operations.checkResource, { params: { id: ids.web } });
      await d.admin.call(operations.checkResource, { params: { id: ids.ci } });
    }
  });

  it('answers 404 for an unknown page', async () => {
    const res = await fetch(`${world().d.url}/api/status-pages/nope/events`);
    expect(res.status).toBe(404);
  });
});
