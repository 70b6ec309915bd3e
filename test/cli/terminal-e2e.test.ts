import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { ROOT, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { until } from '../helpers/http.ts';

/**
 * `monctl topology --watch` in a real terminal (tmux), against a daemon with a
 * real `monctl agent`: the screen shows the agent connect, then disconnect.
 */
const socket = `monctl-cli-e2e-${process.pid}`;
const tmux = (...args: string[]) =>
  execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
const screen = () => tmux('capture-pane', '-p', '-t', 'topo');
let d: TestDaemon;
let agent: ChildProcess | undefined;

beforeAll(async () => {
  d = await startDaemon();
});
afterAll(async () => {
  agent?.kill('SIGKILL');
  try {
    tmux('kill-server');
  } catch {
    // already gone
  }
  await d?.stop();
});

it('shows an agent appear and disappear', async () => {
  const created = await d.admin.call(operations.createAgent, { body: { name: 'e2e-agent' } });
  await d.admin.call(operations.createRoute, {
    body: { name: 'e2e-route', type: 'HTTP', agentId: created.id, target: 'http://127.0.0.1:9', hostname: 'e2e.test' },
  });
  const { token } = await d.admin.call(operations.rotateAgentToken, { params: { id: created.id } });
  const cmd = `MONCTL_SERVER=${d.url} MONCTL_API_KEY=${d.adminKey} ${join(ROOT, 'bin/monctl')} topology --watch`;
  tmux('new-session', '-d', '-s', 'topo', '-x', '120', '-y', '40', cmd);
  await until(() => /● live/.test(screen()) && /pod /.test(screen()));
  expect(screen()).toMatch(/agent e2e-agent \[PENDING\]/);
  expect(screen()).toMatch(/route e2e-route HTTP e2e\.test\//);

  agent = spawn(join(ROOT, 'bin/monctl'), ['agent', '--server', d.url, '--log-level', 'warn'], {
    env: { ...process.env, MONCTL_AGENT_TOKEN: token },
    stdio: 'ignore',
  });
  await until(() => /agent e2e-agent \[CONNECTED\]/.test(screen()));
  expect(screen()).toMatch(/AGENT_CONNECTED agent e2e-agent connected to pod/);

  agent.kill('SIGTERM');
  await until(() => /agent e2e-agent \[DISCONNECTED\]/.test(screen()));
  expect(screen()).toMatch(/AGENT_DISCONNECTED agent e2e-agent disconnected/);

  await d.admin.call(operations.deleteAgent, { params: { id: created.id } });
  await until(() => !/agent e2e-agent \[/.test(screen()) && /AGENT_DELETED agent e2e-agent deleted/.test(screen()));

  tmux('send-keys', '-t', 'topo', 'q');
  await until(() => {
    try {
      screen();
      return false;
    } catch {
      return true; // the session ended with the app
    }
  });
}, 60_000);

it('draws tables with borders and colour on a terminal; NO_COLOR and --no-color turn colour off', async () => {
  const run = (name: string, prefix: string, args: string) => {
    // `read` keeps the pane open after the command so that it can be captured.
    tmux(
      'new-session',
      '-d',
      '-s',
      name,
      '-x',
      '150',
      '-y',
      '20',
      `${prefix} MONCTL_SERVER=${d.url} MONCTL_API_KEY=${d.adminKey} ${join(ROOT, 'bin/monctl')} ${args}; read x`,
    );
  };
  const pane = (name: string) => tmux('capture-pane', '-p', '-e', '-t', name);
  run('colour', '', 'users list');
  run('nocolour', 'NO_COLOR=1', 'users list');
  run('flag', '', 'users list --no-color');
  for (const name of ['colour', 'nocolour', 'flag']) await until(() => /admin/.test(pane(name)));
  expect(pane('colour')).toMatch(/┌/);
  expect(pane('colour')).toMatch(/\u001b\[/);
  for (const name of ['nocolour', 'flag']) {
    expect(pane(name)).toMatch(/┌─+┬/);
    expect(pane(name)).not.toMatch(/\u001b\[(?!0?m)[0-9;]*m/);
  }
});

it('asks before deleting on a terminal, and deletes on "y"', async () => {
  const group = await d.admin.call(operations.createGroup, { body: { name: 'doomed', visibility: 'PUBLIC' } });
  tmux(
    'new-session',
    '-d',
    '-s',
    'confirm',
    '-x',
    '120',
    '-y',
    '10',
    `MONCTL_SERVER=${d.url} MONCTL_API_KEY=${d.adminKey} ${join(ROOT, 'bin/monctl')} groups rm doomed; read x`,
  );
  await until(() => /Delete group doomed\? \[y\/N\]/.test(tmux('capture-pane', '-p', '-t', 'confirm')));
  expect((await d.admin.call(operations.listGroups)).map((g) => g.id)).toContain(group.id);
  tmux('send-keys', '-t', 'confirm', 'y', 'Enter');
  await until(() => /Deleted group doomed/.test(tmux('capture-pane', '-p', '-t', 'confirm')));
  expect((await d.admin.call(operations.listGroups)).map((g) => g.id)).not.toContain(group.id);
});

it('apply --prune lists what it would delete and asks; "n" changes nothing, "y" deletes', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'monctl-e2e-'));
  try {
    const doomed = await d.admin.call(operations.createResource, {
      body: { name: 'tty-doomed', resourceType: 'HTTP', target: 'http://127.0.0.1:9', active: false },
    });
    const file = join(dir, 'keep.yaml');
    writeFileSync(file, 'resources:\n  - {name: tty-kept, type: HTTP, target: "http://127.0.0.1:9/kept", active: false}\n');
    const ids = async () => (await d.admin.call(operations.listAdminResources)).map((r) => r.id);
    const session = (name: string) => {
      tmux(
        'new-session',
        '-d',
        '-s',
        name,
        '-x',
        '120',
        '-y',
        '15',
        `MONCTL_SERVER=${d.url} MONCTL_API_KEY=${d.adminKey} ${join(ROOT, 'bin/monctl')} apply -f ${file} --prune; echo "exit $?"; read x`,
      );
      return () => tmux('capture-pane', '-p', '-t', name);
    };

    const no = session('prune-no');
    await until(() => /Delete this \(not in .*keep\.yaml, --prune\)\? \[y\/N\]/.test(no()));
    expect(no()).toMatch(/^ {2}- resource tty-doomed$/m);
    tmux('send-keys', '-t', 'prune-no', 'n', 'Enter');
    await until(() => /exit 1/.test(no()));
    expect(no()).toMatch(/aborted/);
    // Asked before the first write: not even the creation happened.
    expect(await ids()).toEqual([doomed.id]);

    const yes = session('prune-yes');
    await until(() => /\[y\/N\]/.test(yes()));
    tmux('send-keys', '-t', 'prune-yes', 'y', 'Enter');
    await until(() => /exit 0/.test(yes()));
    expect(yes()).toMatch(/Applied: 1 created, 0 updated, 1 deleted/);
    expect((await d.admin.call(operations.listAdminResources)).map((r) => r.name)).toEqual(['tty-kept']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
