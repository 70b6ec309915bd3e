import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { VERSION } from '../../src/version.ts';
import { ROOT, startDaemon } from '../helpers/daemon.ts';
import { edge, startAgent, startTarget, until } from '../tunnel/helpers.ts';
import { cleanEnv, nodeDir } from './node-versions.ts';

/**
 * The published package as a user gets it: `npm pack`, then `npm i -g` into a
 * temporary prefix, then the global `monctl` on Node 24 and on the oldest Node
 * it supports, 22.19.0 (works), and on Node 20 and 22.18 (says which Node it needs).
 */
const OLDEST = '22.19.0';
let dir: string;
let tarball: string;
const prefix = () => join(dir, 'prefix');
const monctl = () => join(prefix(), 'bin/monctl');
/** PATH with only that Node (and the system's tools after it). */
const pathWith = (nodeBin: string) => `${nodeBin}:/usr/bin:/bin`;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'monctl-install-'));
  const packed = spawnSync('npm', ['pack', '--json', '--pack-destination', dir], { cwd: ROOT, encoding: 'utf8', env: cleanEnv() });
  expect(packed.status, packed.stderr).toBe(0);
  tarball = join(dir, JSON.parse(packed.stdout.slice(packed.stdout.indexOf('[')))[0].filename);
  const node24 = dirname(process.execPath);
  const installed = spawnSync('npm', ['install', '-g', '--no-audit', '--no-fund', '--prefer-offline', '--prefix', prefix(), tarball], {
    encoding: 'utf8',
    env: cleanEnv({ PATH: pathWith(node24) }),
  });
  expect(installed.status, installed.stderr).toBe(0);
}, 180_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('npm pack', () => {
  it('ships dist/, bin/monctl, README, LICENSE and package.json, and nothing else', () => {
    const list = spawnSync('tar', ['tzf', tarball], { encoding: 'utf8' }).stdout.trim().split('\n');
    const outside = list.filter((f) => !/^package\/(dist\/|bin\/monctl$|README\.md$|LICENSE$|package\.json$)/.test(f));
    expect(outside).toEqual([]);
    expect(list).toContain('package/dist/monctl.js');
    expect(list).toContain('package/dist/agent.mjs');
    expect(list.some((f) => /\.ts$/.test(f))).toBe(false);
  });

  it('installs with two runtime dependencies, both native: the SQLite binding and koffi (ICMP sockets for PING checks)', () => {
    const modules = readdirSync(join(prefix(), 'lib/node_modules/monctl/node_modules')).filter((n) => !n.startsWith('.'));
    expect(modules.sort()).toEqual(['@koromix', 'better-sqlite3', 'koffi', 'node-addon-api']);
  });
});

describe.each(['24', OLDEST])('the global monctl on Node %s', (version) => {
  let env: Record<string, string>;
  beforeAll(() => {
    env = { PATH: pathWith(version === '24' ? dirname(process.execPath) : nodeDir(version)) };
  }, 120_000);

  it('answers --version', () => {
    const r = spawnSync(monctl(), ['--version'], { encoding: 'utf8', env: cleanEnv(env) });
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe(VERSION);
  });

  it('runs the daemon (health UP, the explorer assets) and an agent that carries real traffic', async () => {
    const d = await startDaemon({ command: monctl(), env });
    const target = await startTarget((req, res) => res.end(`installed agent saw ${req.url}`));
    const tokenDir = mkdtempSync(join(tmpdir(), 'monctl-install-agent-'));
    try {
      expect(await (await fetch(`${d.url}/actuator/health`)).json()).toEqual({ status: 'UP' });
      expect((await fetch(`${d.url}/swagger-ui/swagger-ui-bundle.js`)).status).toBe(200);
      // PING loads koffi, the one dependency the bundle leaves out besides SQLite: it must resolve from the installed package.
      const ping = await d.admin.call(operations.testResource, { body: { name: 'ping', resourceType: 'PING', target: '127.0.0.1' } });
      expect(ping, JSON.stringify(ping)).toMatchObject({ status: 'AVAILABLE' });
      const created = await d.admin.call(operations.createAgent, { body: { name: 'installed' } });
      const { token } = await d.admin.call(operations.rotateAgentToken, { params: { id: created.id } });
      writeFileSync(join(tokenDir, 'token'), token, { mode: 0o600 });
      await d.admin.call(operations.createRoute, {
        body: { name: 'app', type: 'HTTP', agentId: created.id, target: target.url, hostname: 'app.test' },
      });
      const agent = startAgent(d.url, join(tokenDir, 'token'), [], env, monctl());
      try {
        await until(async () => (await d.admin.call(operations.getAgent, { params: { id: created.id } })).status === 'CONNECTED');
        const res = await edge(d.edgeUrl, 'app.test', 'GET', '/hello');
        expect(res.status).toBe(200);
        expect(res.text).toBe('installed agent saw /hello');
      } finally {
        await agent.stop();
      }
    } finally {
      await d.stop();
      await target.close();
      rmSync(tokenDir, { recursive: true, force: true });
    }
  });

  it('runs a live view in a terminal (the bundled Ink views), and quits on q', async () => {
    const d = await startDaemon({ command: monctl(), env });
    const socket = `monctl-install-${process.pid}-${version}`;
    const tmux = (...args: string[]) =>
      execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const screen = () => tmux('capture-pane', '-p', '-t', 'view');
    try {
      tmux(
        'new-session',
        '-d',
        '-s',
        'view',
        '-x',
        '100',
        '-y',
        '20',
        `PATH=${env.PATH} MONCTL_SERVER=${d.url} MONCTL_API_KEY=${d.adminKey} ${monctl()} topology --watch`,
      );
      await until(() => /monctl topology {2}● live/.test(screen()) && /SNAPSHOT 1 pods/.test(screen()));
      expect(screen()).toMatch(/╭─+╮\n│ pod \S+ \(v/);
      tmux('send-keys', '-t', 'view', 'q');
      await until(() => {
        try {
          tmux('has-session', '-t', 'view');
          return false;
        } catch {
          return true; // the session ended with the view
        }
      });
    } finally {
      try {
        tmux('kill-server');
      } catch {
        // already gone with its last session
      }
      await d.stop();
    }
  });
});

describe.each(['20', '22.18.0'])('the global monctl on Node %s', (version) => {
  it('says which Node it needs and exits 1, whatever the command', () => {
    const env = cleanEnv({ PATH: pathWith(nodeDir(version)) });
    for (const args of [['--version'], ['daemon'], ['agent', '--help']]) {
      const r = spawnSync(monctl(), args, { encoding: 'utf8', env });
      expect(r.status).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(
        new RegExp(`^monctl needs Node\\.js 22\\.19 or newer; this is Node\\.js ${version.split('.')[0]}\\.\\d+\\.\\d+ `),
      );
    }
  }, 120_000);
});
