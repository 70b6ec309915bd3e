import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { ROOT, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { edge, startAgent, startTarget, type TestAgent, until } from '../tunnel/helpers.ts';
import { runMonctl } from './run.ts';

/**
 * `monctl topology` shows each route's pool (docs/API.md#agent-pools): one daemon, a route of three
 * agents (alpha and bravo running `monctl agent`, charlie never connected), each agent with its
 * own target, a health check every second that bravo's target fails until it is switched back.
 * Piped, without --watch (the tree) and with it (NDJSON, ROUTE_HEALTH included); on a real
 * terminal (tmux, 80 columns) the live view follows health, traffic and a killed agent.
 */
const socket = `monctl-topology-pools-${process.pid}`;
const tmux = (...args: string[]) =>
  execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
const capture = () => tmux('capture-pane', '-p', '-J', '-t', 'pools').split('\n').slice(0, 24);

let d: TestDaemon;
let dir: string;
let bravoHealthy = false;
const agents = new Map<string, { id: number; proc?: TestAgent }>();
const targets: Array<Awaited<ReturnType<typeof startTarget>>> = [];
const env = () => ({ MONCTL_SERVER: d.url, MONCTL_API_KEY: d.adminKey, MONCTL_CONFIG_DIR: dir });
const get = () => edge(d.edgeUrl, 'shop.test', 'GET', '/');
const envLine = () =>
  Object.entries(env())
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');

beforeAll(async () => {
  d = await startDaemon();
  dir = mkdtempSync(join(tmpdir(), 'monctl-topology-pools-'));
  for (const name of ['alpha', 'bravo'])
    targets.push(
      await startTarget((req, res) => {
        res.statusCode = req.url === '/health' && name === 'bravo' && !bravoHealthy ? 500 : 200;
        res.end(name);
      }),
    );
  for (const name of ['alpha', 'bravo', 'charlie']) {
    const { id } = await d.admin.call(operations.createAgent, { body: { name } });
    agents.set(name, { id });
    if (name === 'charlie') continue;
    const { token } = await d.admin.call(operations.rotateAgentToken, { params: { id } });
    writeFileSync(join(dir, name), `${token}\n`, { mode: 0o600 });
    agents.get(name)!.proc = startAgent(d.url, join(dir, name));
    await until(async () => (await d.admin.call(operations.getAgent, { params: { id } })).status === 'CONNECTED');
  }
  const ids = [...agents.values()].map((a) => a.id);
  await d.admin.call(operations.createRoute, {
    body: {
      name: 'shop',
      type: 'HTTP',
      hostname: 'shop.test',
      target: targets[0].url,
      agents: [{ agentId: ids[0] }, { agentId: ids[1], target: targets[1].url }, { agentId: ids[2] }],
      healthCheck: { path: '/health', intervalSeconds: 1 },
    },
  });
  for (let i = 0; i < 4; i++) expect((await get()).status).toBe(200);
}, 60_000);

afterAll(async () => {
  try {
    tmux('kill-server');
  } catch {
    // never started, or already gone
  }
  await Promise.all([...agents.values()].map((a) => a.proc?.stop('SIGKILL')));
  await d?.stop();
  await Promise.all(targets.map((t) => t.close()));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('monctl topology: route pools', () => {
  it('without --watch: each route with its pool, health, rotation and traffic share per agent', async () => {
    // Each agent's verdict is in the table once bravo's target has failed its check.
    const tree = await until(async () => {
      const out = (await runMonctl(['topology'], { env: env() })).stdout;
      return /bravo +UNHEALTHY/.test(out) && /alpha +HEALTHY/.test(out) && out;
    });
    const lines = tree.split('\n');
    const at = lines.findIndex((l) => /^ {2}route shop HTTP shop\.test\//.test(l));
    // The shares since the daemon started come from the balancer's counters (pool[].requests).
    expect(lines[at + 1]).toMatch(/^ {4}pool: round-robin, 1\/3 in rotation, share since start$/);
    expect(lines[at + 2]).toMatch(/^ {4}alpha {4}HEALTHY {6}in rotation {3}share +\d+% {2}in flight 0$/);
    expect(lines[at + 3]).toMatch(/^ {4}bravo {4}UNHEALTHY {4}out {11}share +\d+% {2}in flight 0 {2}500 Internal Server Error$/);
    expect(lines[at + 4]).toMatch(/^ {4}charlie {2}UNKNOWN {6}out, offline {2}share +0% {2}in flight 0$/);
    expect(lines.filter((l) => /^ {2}agent \w+ .* serves: shop$/.test(l)).length).toBe(3);
    const shares = lines.slice(at + 2, at + 5).map((l) => Number(/share +(\d+)%/.exec(l)![1]));
    expect(Math.abs(shares.reduce((a, b) => a + b) - 100)).toBeLessThanOrEqual(1);
    expect(shares[2]).toBe(0);
  });

  it('piped --watch prints ROUTE_HEALTH as NDJSON', async () => {
    const child = spawn(join(ROOT, 'bin/monctl'), ['topology', '--watch'], { env: { ...process.env, ...env() } });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    const events = () =>
      out
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
    await until(() => events().some((e) => e.event === 'SNAPSHOT'));
    bravoHealthy = true;
    const event = await until(() => events().find((e) => e.event === 'ROUTE_HEALTH' && e.data.health === 'HEALTHY'));
    expect(event.data).toMatchObject({ agentId: agents.get('bravo')!.id, inRotation: true, error: null });
    child.kill('SIGINT');
    await new Promise((r) => child.once('close', r));
  });

  it('--watch on a terminal of 80 columns: live health, shares of the last minute, a killed agent out', async () => {
    tmux('new-session', '-d', '-s', 'pools', '-x', '80', '-y', '24', `${envLine()} ${join(ROOT, 'bin/monctl')} topology --watch`);
    const pool = () => {
      const lines = capture();
      const at = lines.findIndex((l) => /└ pool: /.test(l));
      return at < 0 ? [] : lines.slice(at, at + 4);
    };
    await until(() => /2\/3 in rotation/.test(pool()[0] ?? ''), 100);
    for (let i = 0; i < 6; i++) expect((await get()).status).toBe(200);
    await until(() => /share of the last 60 s/.test(pool()[0] ?? ''), 100);
    let lines = capture();
    console.log(`--- topology --watch at 80x24\n${lines.map((l) => `|${l.trimEnd()}`).join('\n')}\n---`);
    for (const l of lines) expect([...l].length, l).toBeLessThanOrEqual(80);
    // Whole lines in the box, nothing cut: every agent's figures are there.
    expect(pool()[1]).toMatch(/^│ +└ alpha {4}HEALTHY {6}in rotation {3}share +\d+% {2}in flight \d+ +│$/);
    expect(pool()[2]).toMatch(/^│ +└ bravo {4}HEALTHY {6}in rotation {3}share +\d+% {2}in flight \d+ +│$/);
    expect(pool()[3]).toMatch(/^│ +└ charlie {2}UNKNOWN {6}out, offline {2}share +0% {2}in flight 0 +│$/);

    await agents.get('alpha')!.proc!.stop('SIGKILL');
    await until(() => /└ alpha .* out, offline/.test(pool()[1] ?? ''), 100);
    lines = capture();
    console.log(`--- alpha killed\n${lines.map((l) => `|${l.trimEnd()}`).join('\n')}\n---`);
    expect(pool()[0]).toMatch(/1\/3 in rotation/);
    expect(lines.join('\n')).toMatch(/AGENT_DISCONNECTED agent alpha disconnected/);
  });
});
