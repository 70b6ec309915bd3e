import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { checkNow, httpResource, type Target, target } from '../alerts/helpers.ts';
import { runMonctl } from '../cli/run.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { createTestDatabase, queryDb } from '../helpers/test-database.ts';

/**
 * `monctl daemon copy-data`: a SQLite install with something in every
 * capability, copied into an empty PostgreSQL database; a daemon on that
 * database then serves the same data to the same API key.
 */
describe('copy-data from SQLite to PostgreSQL', () => {
  let sqlite: TestDaemon;
  let pgDaemon: TestDaemon | undefined;
  let t: Target;
  let url: string;
  const base = mkdtempSync(join(tmpdir(), 'monctl-copy-'));
  const before: Record<string, unknown> = {};

  const snapshot = async (d: TestDaemon) => {
    const a = d.admin;
    return {
      groups: await a.call(operations.listGroups),
      resources: (await a.call(operations.listAdminResources)).map(({ latestCheckedAt, ...r }) => ({
        ...r,
        checked: latestCheckedAt !== null,
      })),
      users: await a.call(operations.listUsers),
      keys: (await a.call(operations.listApiKeys)).map(({ lastUsedAt, ...k }) => k),
      // An open incident's duration grows while the test runs.
      incidents: (await a.call(operations.listIncidents, { query: {} })).map(({ durationSeconds, ...i }) => i),
      notifiers: await a.call(operations.listNotifiers),
      rules: await a.call(operations.listAlertRules),
      pages: await a.call(operations.listStatusPages),
      agents: (await a.call(operations.listAgents)).map((x) => x.name),
      routes: await a.call(operations.listRoutes),
      history: await a.call(operations.getResourceHistory, { params: { id: 1 } }),
    };
  };

  beforeAll(async () => {
    t = await target();
    // SQLite whatever the project: that is what is copied.
    sqlite = await startDaemon({ dataDir: join(base, 'data'), databaseUrl: '', args: ['--scheduler', 'off'] });
    const a = sqlite.admin;
    const groups = [];
    for (const name of ['web', 'internal'])
      groups.push((await a.call(operations.createGroup, { body: { name, visibility: 'PUBLIC' } })).id);
    const ids: number[] = [];
    for (let i = 0; i < 12; i++) ids.push(await httpResource(sqlite, `svc-${i}`, `${t.url}${i}`, { groupIds: [groups[i % 2]] }));
    for (const id of ids) await checkNow(sqlite, id);
    t.set(503);
    for (let i = 0; i < 3; i++) await checkNow(sqlite, ids[0]); // opens an incident, writes the outbox
    t.set(200);
    await a.call(operations.createUser, { body: { username: 'viewer', password: 'viewer-password-1', role: 'USER' } });
    await a.call(operations.createApiKey, { body: { name: 'ci', role: 'USER' } });
    const notifier = await a.call(operations.createNotifier, {
      body: { name: 'hook', type: 'WEBHOOK', config: { url: `${t.url}hook` } } as never,
    });
    await a.call(operations.createAlertRule, { body: { name: 'all', events: ['INCIDENT_OPENED'], notifierIds: [notifier.id] } as never });
    await a.call(operations.createStatusPage, { body: { slug: 'main', title: 'Status', groupIds: groups } });
    await a.call(operations.createAnnouncement, { body: { kind: 'INFORMATION', content: '<p>hello</p>', active: true } });
    await a.call(operations.addCorsOrigin, { body: { origin: 'https://dash.example.com' } });
    const agent = await a.call(operations.createAgent, { body: { name: 'edge-1' } });
    await a.call(operations.createRoute, {
      body: { name: 'app', type: 'HTTP', agentId: agent.id, target: 'http://127.0.0.1:9/', hostname: 'app.test' },
    });
    Object.assign(before, await snapshot(sqlite));
    await sqlite.stop();
    url = await createTestDatabase();
  });
  afterAll(async () => {
    await pgDaemon?.stop();
    await t?.close();
    rmSync(base, { recursive: true, force: true });
  });

  it('copies every table, advances the ids, compares the counts, and refuses a database that is not empty', async () => {
    const copy = await runMonctl(['daemon', 'copy-data', '--from', sqlite.dataDir, '--to', url]);
    expect(copy.code, copy.stderr).toBe(0);
    expect(copy.stderr).toMatch(/counts match/);
    const lines = copy.stdout
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.trim().split(/\s+/));
    const counts = Object.fromEntries(lines.map(([table, s, p]) => [table, [Number(s), Number(p)]]));
    for (const table of [
      'users',
      'api_keys',
      'groups',
      'resources',
      'resource_groups',
      'check_history',
      'incidents',
      'alert_events',
      'notifiers',
      'alert_rules',
      'status_pages',
      'announcements',
      'cors_origins',
      'agents',
      'routes',
      'settings',
      'pods',
    ]) {
      expect(counts[table]?.[0], table).toBeGreaterThan(0);
      expect(counts[table]?.[1], table).toBe(counts[table][0]);
    }
    expect(Object.keys(counts)).not.toContain('kysely_migration');

    // The same key (the install secret came along) sees the same data on PostgreSQL.
    pgDaemon = await startDaemon({ databaseUrl: url, adminKeyFrom: sqlite, args: ['--scheduler', 'off'] });
    expect(await snapshot(pgDaemon)).toEqual(before);
    // New rows get ids past the copied ones.
    const maxGroup = Math.max(...(before.groups as Array<{ id: number }>).map((g) => g.id));
    const group = await pgDaemon.admin.call(operations.createGroup, { body: { name: 'after-copy', visibility: 'PUBLIC' } });
    expect(group.id).toBeGreaterThan(maxGroup);
    const [history] = await queryDb<{ n: number }>(pgDaemon, 'SELECT count(*) AS n FROM check_history');
    expect(history.n).toBe(counts.check_history[0]);

    const again = await runMonctl(['daemon', 'copy-data', '--from', sqlite.dataDir, '--to', url]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/is not empty \(rows in .*groups/);
  });

  it('refuses a data dir without a database (exit 3) and a URL that is not postgres:// (exit 2)', async () => {
    const none = await runMonctl(['daemon', 'copy-data', '--from', '/nonexistent-monctl', '--to', url]);
    expect(none.code).toBe(3);
    expect(none.stderr).toContain('no SQLite database at /nonexistent-monctl/monctl.db');
    const bad = await runMonctl(['daemon', 'copy-data', '--from', sqlite.dataDir, '--to', 'mysql://x/y']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('must be a postgres:// URL');
  });
});
