import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { type Target, target, until } from '../alerts/helpers.ts';
import { adminRunner, type RunResult, tempHome } from './run.ts';

/** Header line and rows of tab-separated output (stdout is a pipe). */
const tsv = (text: string) =>
  text
    .trimEnd()
    .split('\n')
    .map((l) => l.split('\t'));

/** `monctl incidents`, `monctl maintenance`, thresholds on `resources`, and maintenance in `apply -f`. */
describe('incidents and maintenance in the CLI', () => {
  let d: TestDaemon;
  let t: Target;
  let home: ReturnType<typeof tempHome>;
  let monctl: (args: string[]) => Promise<RunResult>;

  beforeAll(async () => {
    [d, t] = await Promise.all([startDaemon({ args: ['--scheduler', 'off'] }), target()]);
    home = tempHome();
    monctl = adminRunner(d, home.dir);
  });
  afterAll(async () => {
    await Promise.all([d?.stop(), t?.close()]);
    home?.cleanup();
  });

  const ok = async (args: string[]) => {
    const r = await monctl(args);
    expect(r.code, `${args.join(' ')}\n${r.stderr}`).toBe(0);
    return r;
  };

  it('sets thresholds on add and update, and refuses a bad one', async () => {
    await ok(['resources', 'add', 'web', '--target', t.url, '--failure-threshold', '2', '--success-threshold', '2']);
    expect((await ok(['resources', 'get', 'web', '-o', 'json'])).json()).toMatchObject({ failureThreshold: 2, successThreshold: 2 });
    await ok(['resources', 'update', 'web', '--success-threshold', '1']);
    expect((await ok(['resources', 'get', 'web', '-o', 'json'])).json()).toMatchObject({ failureThreshold: 2, successThreshold: 1 });
    const bad = await monctl(['resources', 'update', 'web', '--failure-threshold', '0']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--failure-threshold must be a number from 1 to 100/);
  });

  it('lists incidents open first with durations, filters them, and shows one', async () => {
    await ok(['resources', 'add', 'api', '--target', t.url, '--failure-threshold', '1']);
    t.set(500);
    expect((await monctl(['resources', 'check', 'api'])).code).toBe(5);
    t.set(200);
    await ok(['resources', 'check', 'api']);
    t.set(503);
    await monctl(['resources', 'check', 'api']);
    t.set(200);

    const [head, ...rows] = tsv((await ok(['incidents', 'list'])).stdout);
    expect(head).toEqual(['ID', 'SUBJECT', 'STATE', 'OPENED', 'DURATION', 'CAUSE', 'MAINT']);
    expect(rows.map((r) => [r[1], r[2], r[5]])).toEqual([
      ['api', 'open', '503 503 Service Unavailable'],
      ['api', 'resolved', '500 500 Internal Server Error'],
    ]);
    expect(rows[0][4]).toMatch(/^\d+s$/);
    const json = (await ok(['incidents', 'list', '--resource', 'api', '--state', 'resolved', '-o', 'json'])).json();
    expect(json).toHaveLength(1);
    expect(json[0]).toMatchObject({ cause: { errorCode: '500' }, checks: 1, maintenance: false });
    expect((await ok(['incidents', 'get', String(json[0].id), '-o', 'json'])).json()).toEqual(json[0]);
    expect((await monctl(['incidents', 'get', '999999'])).code).toBe(3);
    expect((await monctl(['incidents', 'list', '--state', 'closed'])).code).toBe(2);
    await ok(['resources', 'check', 'api']);
  });

  it('adds, lists and removes one-off and weekly maintenance windows', async () => {
    await ok(['groups', 'add', 'db']);
    const weekly = await ok([
      'maintenance',
      'add',
      'backups',
      '--weekly',
      'mon,wed',
      '--at',
      '02:00',
      '--duration',
      '1h30m',
      '--tz',
      'America/New_York',
      '--resource',
      'web',
      '--group',
      'db',
      '-o',
      'json',
    ]);
    expect(weekly.json()).toMatchObject({
      kind: 'WEEKLY',
      days: ['MON', 'WED'],
      startTime: '02:00',
      durationMinutes: 90,
      timeZone: 'America/New_York',
      groupIds: [expect.any(Number)],
    });
    const now = Date.now();
    const wire = (ms: number) => new Date(ms).toISOString().slice(0, 19);
    const added = await ok([
      'maintenance',
      'add',
      'now',
      '--start',
      wire(now - 60_000),
      '--end',
      wire(now + 3_600_000),
      '--resource',
      'api',
    ]);
    expect(added.stdout).toMatch(/^Created maintenance window now \(id \d+\): .*, open now\.$/m);
    const [head, ...rows] = tsv((await ok(['maintenance', 'list'])).stdout);
    expect(head).toEqual(['ID', 'NAME', 'SCHEDULE', 'ACTIVE', 'NEXT START', 'NEXT END', 'TARGETS']);
    expect(rows.map((r) => [r[1], r[2], r[3], r[6]])).toEqual([
      ['backups', 'MON,WED 02:00 for 1h30m (America/New_York)', 'no', 'resource web, group db'],
      ['now', `${wire(now - 60_000)} to ${wire(now + 3_600_000)}`, 'yes', 'resource api'],
    ]);
    expect((await ok(['resources', 'get', 'api', '-o', 'json'])).json().inMaintenance).toBe(true);

    for (const [args, message] of [
      [['maintenance', 'add', 'x', '--resource', 'api'], /either --start and --end/],
      [['maintenance', 'add', 'x', '--weekly', 'MON', '--at', '02:00', '--duration', 'soon', '--resource', 'api'], /--duration must be/],
      [['maintenance', 'add', 'x', '--weekly', 'FUN', '--at', '02:00', '--duration', '1h', '--resource', 'api'], /--weekly takes days/],
      [['maintenance', 'add', 'x', '--start', wire(now), '--end', wire(now + 1000)], /--resource, --group and\/or --agent/],
    ] as const) {
      const r = await monctl([...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    const badZone = await monctl([
      'maintenance',
      'add',
      'x',
      '--weekly',
      'MON',
      '--at',
      '02:00',
      '--duration',
      '1h',
      '--tz',
      'Mars/Base',
      '--resource',
      'api',
    ]);
    expect(badZone.code).toBe(1);
    expect(badZone.stderr).toMatch(/--tz: is not an IANA time zone/); // the flag, not the API's timeZone (issue 25)

    expect((await monctl(['maintenance', 'rm', 'now'])).code).toBe(2); // needs --yes in a script
    await ok(['maintenance', 'rm', 'now', '--yes']);
    await ok(['maintenance', 'rm', 'backups', '--yes']);
    expect((await ok(['maintenance', 'list', '-o', 'json'])).json()).toEqual([]);
    expect((await monctl(['maintenance', 'rm', 'backups', '--yes'])).code).toBe(3);
  });

  it('apply -f manages maintenance windows by name and the thresholds of resources', async () => {
    const path = join(home.dir, 'alerts.yaml');
    const spec = (duration: number) => `
groups:
  - name: db
resources:
  - name: shop
    type: HTTP
    target: ${t.url}
    failureThreshold: 4
    successThreshold: 2
    active: false
maintenance:
  - name: nightly
    days: [TUE]
    startTime: "03:00"
    durationMinutes: ${duration}
    timeZone: Europe/Paris
    resources: [shop]
    groups: [db]
  - name: migration
    startsAt: "2030-01-01T00:00:00Z"
    endsAt: "2030-01-01T02:00:00Z"
    resources: [shop]
`;
    writeFileSync(path, spec(60));
    const first = await ok(['apply', '-f', path]);
    expect(first.stdout).toMatch(/\+ create resource shop/);
    expect(first.stdout).toMatch(/\+ create maintenance nightly/);
    expect(first.stdout).toMatch(/\+ create maintenance migration/);
    expect((await ok(['resources', 'get', 'shop', '-o', 'json'])).json()).toMatchObject({ failureThreshold: 4, successThreshold: 2 });
    const windows = (await ok(['maintenance', 'list', '-o', 'json'])).json();
    expect(windows.map((w: { name: string }) => w.name).sort()).toEqual(['migration', 'nightly']);
    expect((await ok(['apply', '-f', path])).stdout).toMatch(/^No changes/);

    writeFileSync(
      path,
      spec(120)
        .replace('failureThreshold: 4', 'failureThreshold: 5')
        .replace(/ {2}- name: migration[\s\S]*$/, ''),
    );
    const second = await ok(['apply', '-f', path, '--prune', '--yes']);
    expect(second.stdout).toMatch(/~ update resource shop \(failureThreshold\)/);
    expect(second.stdout).toMatch(/~ update maintenance nightly \(durationMinutes\)/);
    expect(second.stdout).toMatch(/- delete maintenance migration/);
    expect((await ok(['maintenance', 'list', '-o', 'json'])).json()).toEqual([
      expect.objectContaining({ name: 'nightly', durationMinutes: 120 }),
    ]);

    const bad = join(home.dir, 'bad.yaml');
    writeFileSync(bad, 'maintenance:\n  - name: x\n    days: [MON]\n    resources: [nowhere]\n');
    const refused = await monctl(['apply', '-f', bad]);
    expect(refused.code).toBe(2); // an invalid file is a usage error (issue 25)
    expect(refused.stderr).toMatch(/maintenance\[0\]\.startTime: is required for WEEKLY windows/);
  });
  it('status --watch, piped, prints incidents opening and resolving as NDJSON', async () => {
    const child = spawn(join(ROOT, 'bin/monctl'), ['status', '--watch'], {
      env: { ...process.env, MONCTL_SERVER: d.url, MONCTL_API_KEY: d.adminKey, MONCTL_CONFIG_DIR: home.dir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    const exited = new Promise((r) => child.on('close', r));
    const events = () =>
      out
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { event: string; data: any });
    try {
      await until(() => events().some((e) => e.event === 'SNAPSHOT'));
      await ok(['resources', 'add', 'watched', '--target', t.url, '--failure-threshold', '1']);
      t.set(500);
      await monctl(['resources', 'check', 'watched']);
      t.set(200);
      await ok(['resources', 'check', 'watched']);
      await until(() => events().some((e) => e.event === 'INCIDENT_RESOLVED'));
      const incidents = events().filter((e) => e.event.startsWith('INCIDENT_'));
      expect(incidents.map((e) => [e.event, e.data.resourceId === incidents[0].data.resourceId, e.data.cause.errorCode])).toEqual([
        ['INCIDENT_OPENED', true, '500'],
        ['INCIDENT_RESOLVED', true, '500'],
      ]);
    } finally {
      child.kill('SIGINT');
      await exited;
    }
  });
});
