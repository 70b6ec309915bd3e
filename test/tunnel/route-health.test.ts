import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import type { PoolMember } from '../../src/api/schemas/route-pools.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { api } from '../tunnel-admin/helpers.ts';
import { type SseEvent, startAgent, startTarget, subscribe, type TestAgent, until } from './helpers.ts';

/**
 * Target health checks that steer traffic (docs/API.md#agent-pools): one daemon, two agents of one
 * route, each pointed at its own target whose /health can be switched to fail a condition. The
 * checks run every second through the agents, with the monitoring engine's HTTP check.
 */
interface Target {
  name: string;
  healthy: boolean;
  /** /health requests answered while failing. */
  failing: number;
  url: string;
  close(): Promise<void>;
}

let d: TestDaemon;
let dir: string;
const targets: Target[] = [];
const agents: { id: number; tokenFile: string; proc: TestAgent }[] = [];
let topology: { events: SseEvent[]; close(): void };
let routeId: number;

async function target(name: string): Promise<Target> {
  const t = { name, healthy: true, failing: 0 } as Target;
  const server = await startTarget((req, res) => {
    if (req.url === '/base/health') {
      if (!t.healthy) t.failing++;
      res.setHeader('content-type', 'application/json');
      return void res.end(JSON.stringify({ status: t.healthy ? 'UP' : 'DOWN' }));
    }
    res.end(name);
  });
  return Object.assign(t, { url: `${server.url}/base`, close: server.close });
}

const pool = async (): Promise<PoolMember[]> => (await d.admin.call(operations.getRoute, { params: { id: routeId } })).pool ?? [];
const member = async (i: number) => (await pool())[i];
const healthEvents = (agentId: number) =>
  topology.events.filter((e) => e.event === 'ROUTE_HEALTH' && e.data.routeId === routeId && e.data.agentId === agentId);

beforeAll(async () => {
  d = await startDaemon();
  dir = mkdtempSync(join(tmpdir(), 'monctl-route-health-'));
  targets.push(await target('alpha'), await target('beta'));
  for (const name of ['alpha', 'beta']) {
    const { id } = await d.admin.call(operations.createAgent, { body: { name } });
    const { token } = await d.admin.call(operations.rotateAgentToken, { params: { id } });
    const tokenFile = join(dir, name);
    writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
    agents.push({ id, tokenFile, proc: startAgent(d.url, tokenFile) });
    await until(async () => (await d.admin.call(operations.getAgent, { params: { id } })).status === 'CONNECTED');
  }
  topology = await subscribe(d, '/admin/sse/topology');
  const route = await d.admin.call(operations.createRoute, {
    body: {
      name: 'pooled',
      type: 'HTTP',
      hostname: 'pooled.test',
      target: 'http://127.0.0.1:9/',
      agents: agents.map((a, i) => ({ agentId: a.id, target: targets[i].url })),
      healthCheck: { path: '/health', intervalSeconds: 1, conditions: ['[BODY].status == UP'] },
    },
  });
  routeId = route.id;
}, 60_000);

afterAll(async () => {
  topology?.close();
  await Promise.all(agents.map((a) => a.proc.stop('SIGKILL')));
  await d?.stop();
  await Promise.all(targets.map((t) => t.close()));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('target health checks', () => {
  it('checks each agent against its own target through the agent, and shows the verdicts', async () => {
    const members = await until(async () => {
      const p = await pool();
      return p.every((m) => m.health === 'HEALTHY') && p;
    });
    for (const m of members) {
      expect(m).toMatchObject({ connected: true, inRotation: true, healthError: null });
      expect(Date.parse(m.healthCheckedAt ?? '')).toBeGreaterThan(0);
    }
    for (const a of agents) expect(healthEvents(a.id)[0]?.data).toMatchObject({ health: 'HEALTHY', inRotation: true, error: null });
  });

  it('takes a failing target out of the rotation within two checks and brings it back when it passes', async () => {
    const beta = agents[1].id;
    const seen = healthEvents(beta).length;
    targets[1].healthy = false;
    const out = await until(() =>
      healthEvents(beta)
        .slice(seen)
        .find((e) => e.data.health === 'UNHEALTHY'),
    );
    // Within two check intervals: no more than two failing checks reached the target before the verdict.
    expect(targets[1].failing).toBeGreaterThanOrEqual(1);
    expect(targets[1].failing).toBeLessThanOrEqual(2);
    expect(out.data).toMatchObject({ inRotation: false, error: expect.stringContaining('[BODY].status (DOWN) == UP') });
    expect(await member(1)).toMatchObject({ health: 'UNHEALTHY', inRotation: false, connected: true });
    expect((await member(1)).healthError).toContain('(DOWN)');
    expect(await member(0)).toMatchObject({ health: 'HEALTHY', inRotation: true });

    const back = healthEvents(beta).length;
    targets[1].healthy = true;
    await until(() =>
      healthEvents(beta)
        .slice(back)
        .find((e) => e.data.health === 'HEALTHY'),
    );
    expect(await member(1)).toMatchObject({ health: 'HEALTHY', inRotation: true, healthError: null });
  });

  it('drops the verdict of an agent that disconnects and checks it again when it reconnects', async () => {
    const beta = agents[1];
    await beta.proc.stop('SIGTERM');
    await until(async () => (await member(1)).health === 'UNKNOWN');
    expect(await member(1)).toMatchObject({ connected: false, inRotation: false, healthCheckedAt: null });
    beta.proc = startAgent(d.url, beta.tokenFile);
    await until(async () => (await member(1)).health === 'HEALTHY');
    expect(await member(1)).toMatchObject({ connected: true, inRotation: true });
  });

  it('refuses conditions that do not parse or do not fit the check, naming them', async () => {
    const base = { name: 'bad', type: 'HTTP', hostname: 'bad.test', target: 'http://127.0.0.1:9/', agentId: agents[0].id };
    const bad = await api(d, 'POST', '/admin/api/routes', {
      ...base,
      healthCheck: { conditions: ['[STATUS] == 200', '[PACKET_LOSS] == 0'] },
    });
    expect(bad.status).toBe(400);
    expect(bad.json().errors[0].field).toBe('healthCheck.conditions[1]');
    const syntax = await api(d, 'POST', '/admin/api/routes', { ...base, healthCheck: { conditions: ['[STATUS] =='] } });
    expect(syntax.status).toBe(400);
    expect(syntax.json().errors[0].field).toBe('healthCheck.conditions[0]');
    const tcp = await api(d, 'POST', '/admin/api/routes', {
      ...base,
      type: 'TCP',
      hostname: undefined,
      target: '127.0.0.1:9',
      listenPort: 1,
      healthCheck: { conditions: ['[STATUS] == 200'] },
    });
    expect(tcp.status).toBe(400);
    expect(tcp.json().errors[0].field).toBe('healthCheck.conditions[0]');
    const backwards = await api(d, 'POST', '/admin/api/routes', { ...base, healthCheck: { expectStatus: ['299-200'] } });
    expect(backwards.status).toBe(400);
    expect(backwards.json().errors[0].field).toBe('healthCheck.expectStatus[0]');
  });
});
