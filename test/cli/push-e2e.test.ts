import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { eventually, itemsOf } from '../alerts/world.ts';
import { ROOT, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { queryDb } from '../helpers/test-database.ts';
import { startWebhookReceiver } from '../notifiers/receivers.ts';
import { adminRunner, type RunOptions, type RunResult, tempHome } from './run.ts';

/**
 * Push checks end to end with real processes (docs/API.md#push-checks): `monctl resources add
 * --push` printing the ping URL, `monctl ping` of each kind, a cron-like shell script that uses
 * `monctl run` and curl, the daemon's test clock moved past the deadline plus grace (one
 * MISSED_PING, one alert at a real webhook receiver), `monctl run` keeping a failing command's
 * exit code with the daemon reachable or not, and `apply -f` create / no change / update.
 */
// Each test runs monctl many times, a cold start each: generous on a loaded 2-core machine.
vi.setConfig({ testTimeout: 120_000 });
let d: TestDaemon;
let home: ReturnType<typeof tempHome>;
let monctl: (args: string[], opts?: RunOptions) => Promise<RunResult>;
let secret = '';
let hook: Awaited<ReturnType<typeof startWebhookReceiver>>;

beforeAll(async () => {
  d = await startDaemon({ args: ['--test-clock', 'on', '--notifier-retry-base', '200ms'] });
  home = tempHome();
  monctl = adminRunner(d, home.dir);
  hook = await startWebhookReceiver(() => secret);
});
afterAll(async () => {
  await hook?.close();
  await d?.stop();
  home?.cleanup();
});

const UUID_URL = /^Ping URL: (http:\/\/127\.0\.0\.1:\d+\/ping\/([0-9a-f-]{36}))$/m;
const history = async (name: string) => (await monctl(['resources', 'history', name, '-o', 'json'])).json();
const detail = async (name: string) => (await monctl(['resources', 'get', name, '-o', 'json'])).json();

describe('resources add --push, get, ping, history', () => {
  let url = '';
  it('add prints the ping URL, absolute with the server monctl talks to; get shows the schedule', async () => {
    const res = await monctl(['resources', 'add', 'pinged', '--push', '--cron', '0 3 * * *', '--tz', 'Europe/Berlin', '--grace', '30m']);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^Created resource pinged \(id \d+\)\.$/m);
    url = UUID_URL.exec(res.stdout)![1];
    expect(url.startsWith(d.url)).toBe(true);
    const table = await monctl(['resources', 'get', 'pinged']);
    expect(table.stdout).toContain(`PING URL\t${url}\n`);
    expect(table.stdout).toContain('SCHEDULE\tcron 0 3 * * * (Europe/Berlin)\n');
    expect(table.stdout).toContain('GRACE\t30m\n');
    expect(table.stdout).toContain('LAST PING\tnever\n');
    expect((await detail('pinged')).push).toMatchObject({ pingUrl: url, cron: '0 3 * * *', timezone: 'Europe/Berlin', graceSeconds: 1800 });
  });

  it('monctl ping sends each kind (by name with the key, by UUID without one); history shows them', async () => {
    const uuid = url.slice(-36);
    const anonymous = { MONCTL_API_KEY: undefined, MONCTL_SERVER: d.url, MONCTL_CONFIG_DIR: join(home.dir, 'none') };
    for (const [args, opts] of [
      [['pinged', '--start'], {}],
      [['pinged', '--log', '--body', 'a log line'], {}],
      [[uuid, '--body', '-'], { input: 'all good', env: anonymous }],
      [['pinged', '--exit-code', '4'], {}],
      [[uuid, '--fail'], { env: anonymous }],
    ] as const) {
      const res = await monctl(['ping', ...args], opts as RunOptions);
      expect(res.code, `${args.join(' ')}: ${res.stderr}`).toBe(0);
    }
    const entries = await history('pinged');
    expect(entries.map((e: any) => [e.ping.kind, e.ping.exitCode, e.ping.body])).toEqual([
      ['fail', null, null],
      ['fail', 4, null],
      ['success', null, 'all good'],
      ['log', null, 'a log line'],
      ['start', null, null],
    ]);
    expect(entries[0]).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'FAILED_RUN' });
    expect(entries[0].ping.userAgent).toMatch(/^monctl\//);
    const table = await monctl(['resources', 'history', 'pinged']);
    expect(table.stdout.split('\n')[0]).toBe('ID\tCHECKED\tSTATUS\tERROR\tMESSAGE\tKIND\tEXIT\tSOURCE\tRUN MS\tBODY');
    expect(table.stdout).toMatch(/\tsuccess\t-\t127\.0\.0\.1\t\d+\tall good\n/);
    const body = await monctl(['resources', 'history', 'pinged', '--body', String(entries[3].id)]);
    expect(body.stdout).toBe('a log line');
  });

  it('a UUID no check has: exit 3; a resource that is not a push check: exit 2', async () => {
    const missing = await monctl(['ping', '00000000-0000-4000-8000-000000000000']);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toMatch(/no push check has the ping URL .*\(404\)/);
    await monctl(['resources', 'add', 'probed', '--target', `${d.url}/actuator/health`, '--inactive']);
    const probed = await monctl(['ping', 'probed']);
    expect(probed.code).toBe(2);
    expect(probed.stderr).toMatch(/resource "probed" is HTTP, not a push check/);
  });

  it('update switches a cron schedule to a period (and back)', async () => {
    const res = await monctl(['resources', 'update', 'pinged', '--period', '12h']);
    expect(res.code, res.stderr).toBe(0);
    expect((await detail('pinged')).push).toMatchObject({ periodSeconds: 43200, cron: null });
    await monctl(['resources', 'update', 'pinged', '--cron', '*/5 * * * *']);
    expect((await detail('pinged')).push).toMatchObject({ periodSeconds: null, cron: '*/5 * * * *' });
  });
});

describe('ping-keys', () => {
  it('create, list, the slug URL in get and pinging through it, rm', async () => {
    const created = await monctl(['ping-keys', 'create', '-o', 'json']);
    expect(created.code, created.stderr).toBe(0);
    const key = created.json();
    expect(key).toMatchObject({ groupId: null, allowCreate: false });
    const list = await monctl(['ping-keys', 'list']);
    expect(list.stdout).toMatch(new RegExp(`^${key.id}\t${key.key}\tthe daemon's\tno\t`, 'm'));
    await monctl(['resources', 'add', 'slugged', '--push', '--slug', 'slugged-job']);
    const slugUrl = (await detail('slugged')).push.slugUrl;
    expect(slugUrl).toBe(`${d.url}/ping/${key.key}/slugged-job`);
    expect((await monctl(['ping', slugUrl, '--log', '--body', 'via slug'])).code).toBe(0);
    expect((await history('slugged'))[0].ping).toMatchObject({ kind: 'log', body: 'via slug' });
    const rm = await monctl(['ping-keys', 'rm', String(key.id), '--yes']);
    expect(rm.code, rm.stderr).toBe(0);
    expect((await monctl(['ping', slugUrl])).code).toBe(3);
    expect((await monctl(['ping-keys', 'rm', 'daemon'])).code).toBe(2);
  });
});

describe('a cron-like script: monctl run and curl, then a missed run', () => {
  it('pings through both, then one grace after the deadline: NOT_AVAILABLE (MISSED_PING) and one alert', async () => {
    const add = await monctl(['resources', 'add', 'backup', '--push', '--period', '1h', '--grace', '10m', '--failure-threshold', '1']);
    expect(add.code, add.stderr).toBe(0);
    const url = UUID_URL.exec(add.stdout)![1];
    const { id } = await detail('backup');
    const n = await d.admin.call(operations.createNotifier, {
      body: { name: 'hook', type: 'WEBHOOK', config: { url: `${hook.url}/hook` } } as never,
    });
    secret = (n as { signingSecret: string }).signingSecret;
    await d.admin.call(operations.createAlertRule, {
      body: { name: 'backup', events: ['INCIDENT_OPENED'], notifierIds: [n.id], resourceIds: [id], groupWaitSeconds: 0 } as never,
    });

    const script = join(home.dir, 'nightly.sh');
    writeFileSync(
      script,
      [
        '#!/bin/sh',
        'set -e',
        'monctl run backup -- sh -c "echo dumping; echo dumped"',
        'curl -fsS -m 10 --data-binary "rotated logs" "$PING_URL" >/dev/null',
        'echo script-done',
        '',
      ].join('\n'),
    );
    chmodSync(script, 0o755);
    const proc = spawn(script, {
      env: {
        PATH: `${join(ROOT, 'bin')}:${process.env.PATH}`,
        HOME: home.dir,
        MONCTL_SERVER: d.url,
        MONCTL_API_KEY: d.adminKey,
        MONCTL_CONFIG_DIR: home.dir,
        PING_URL: url,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    proc.stdout.on('data', (c) => (out += c));
    proc.stderr.on('data', (c) => (err += c));
    const [code] = await once(proc, 'exit');
    expect(code, err).toBe(0);
    expect(out).toBe('dumping\ndumped\nscript-done\n');

    const entries = await history('backup');
    expect(entries.map((e: any) => [e.ping.kind, e.ping.exitCode, e.ping.body])).toEqual([
      ['success', null, 'rotated logs'],
      ['success', 0, 'dumping\ndumped\n'],
      ['start', null, null],
    ]);
    expect(entries[1].ping.runMs).toBeGreaterThanOrEqual(0);
    expect((await detail('backup')).currentStatus).toBe('available');

    // The next ping was due an hour after the last; past that and the 10 min grace it is missed.
    await d.admin.call(operations.moveTestClock, { body: { advanceSeconds: 3600 + 600 + 5 } });
    await eventually('MISSED_PING', async () => (await detail('backup')).latestErrorCode === 'MISSED_PING');
    expect((await detail('backup')).currentStatus).toBe('not_available');
    await eventually('the alert', () => hook.verified.length > 0);
    const items = hook.verified.flatMap(itemsOf);
    expect(items.map((i) => [i.kind, i.subject.name])).toEqual([['INCIDENT_OPENED', 'backup']]);
    // Once: one MISSED_PING entry, one alert event (a second would be sent as the first was).
    const missed = (await history('backup')).filter((e: any) => e.errorCode === 'MISSED_PING');
    expect(missed).toHaveLength(1);
    const events = await queryDb<{ n: number }>(
      d,
      "SELECT COUNT(*) AS n FROM alert_events WHERE resource_id = ? AND kind = 'INCIDENT_OPENED'",
      id,
    );
    expect(Number(events[0].n)).toBe(1);
  });
});

describe('monctl run with a failing command', () => {
  it('records exit code 3 (FAILED_RUN) and exits 3', async () => {
    await monctl(['resources', 'add', 'failing', '--push']);
    const res = await monctl(['run', 'failing', '--', 'sh', '-c', 'echo broken >&2; exit 3']);
    expect(res.code).toBe(3);
    expect(res.stderr).toBe('broken\n');
    const [last] = await history('failing');
    expect(last).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'FAILED_RUN' });
    expect(last.ping).toMatchObject({ kind: 'fail', exitCode: 3, body: 'broken\n' });
  });

  it('with the daemon out of reach the command still runs, its output appears and exit 3 is kept', async () => {
    const uuid = (await detail('failing')).push.uuid;
    const res = await monctl(['run', uuid, '--', 'sh', '-c', 'echo ran-anyway; exit 3'], {
      env: { MONCTL_SERVER: 'http://127.0.0.1:1' },
    });
    expect(res.code).toBe(3);
    expect(res.stdout).toBe('ran-anyway\n');
    expect(res.stderr).toMatch(/monctl run: could not ping 3: cannot reach http:\/\/127\.0\.0\.1:1/);
  });
});

describe('apply -f with push resources', () => {
  it('creates, then has nothing to change, then updates the schedule', async () => {
    const file = join(home.dir, 'push.yaml');
    const write = (schedule: string[]) =>
      writeFileSync(file, ['resources:', '  - name: certs', '    type: PUSH', '    target: cert-renewal', ...schedule, ''].join('\n'));
    write(['    cron: "0 3 * * *"', '    timezone: Europe/Berlin', '    graceSeconds: 1800']);
    const created = await monctl(['apply', '-f', file]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/^\+ create resource certs$/m);
    expect((await detail('certs')).push).toMatchObject({
      slug: 'cert-renewal',
      cron: '0 3 * * *',
      timezone: 'Europe/Berlin',
      graceSeconds: 1800,
    });

    const again = await monctl(['apply', '-f', file]);
    expect(again.stdout).toMatch(/^No changes/);

    write(['    periodSeconds: 86400', '    graceSeconds: 600']);
    const plan = await monctl(['apply', '-f', file, '--dry-run']);
    expect(plan.stdout).toMatch(/^~ update resource certs \(periodSeconds, graceSeconds\)$/m);
    const updated = await monctl(['apply', '-f', file]);
    expect(updated.code, updated.stderr).toBe(0);
    expect((await detail('certs')).push).toMatchObject({ periodSeconds: 86400, cron: null, graceSeconds: 600 });
  });

  it('refuses probe fields on a push resource before any write (exit 2)', async () => {
    const file = join(home.dir, 'bad-push.yaml');
    writeFileSync(file, 'resources:\n  - name: bad\n    type: PUSH\n    intervalSeconds: 60\n    cron: "0 3 *"\n');
    const res = await monctl(['apply', '-f', file]);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/resources\[0\]\.intervalSeconds: is not for PUSH resources/);
    expect(res.stderr).toMatch(/resources\[0\]\.cron: must be a cron expression/);
  });
});
