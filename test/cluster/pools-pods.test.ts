import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import type { TestDaemon } from '../helpers/daemon.ts';
import { agentSlot } from '../helpers/tls.ts';
import { edge, startAgent, startTarget, type TestAgent, until } from '../tunnel/helpers.ts';
import { type Pods, startPods } from './pods.ts';

/**
 * Agent pools across pods (docs/API.md#agent-pools): two pods on one PostgreSQL database, a route
 * whose pool has one agent connected to each pod. Every pod balances across both: its own agent
 * directly, the other pod's through the pod relay.
 */
describe('agent pools across pods', () => {
  let cluster: Pods;
  let dir: string;
  const agents: TestAgent[] = [];
  const targets: Array<Awaited<ReturnType<typeof startTarget>>> = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'monctl-pools-pods-'));
    cluster = await startPods(2);
  }, 60_000);
  afterAll(async () => {
    await Promise.all(agents.map((a) => a.stop('SIGKILL')));
    await cluster?.stop();
    await Promise.all(targets.map((t) => t.close()));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("requests through either pod reach the agents of both pods; one pod's agent gone, the other takes all", async () => {
    const [a, b] = ['pod-a', 'pod-b'].map((name) => cluster.pod(name));
    const slots: Array<{ id: number; tokenFile: string }> = [];
    for (const [name, pod] of [
      ['a', a],
      ['b', b],
    ] as Array<[string, TestDaemon]>) {
      const slot = await agentSlot(a, `agent-${name}`, dir);
      targets.push(await startTarget((req, res) => res.end(`${name} ${req.url}`)));
      // Each agent dials its own pod.
      agents.push(startAgent(pod.url, slot.tokenFile));
      slots.push(slot);
    }
    for (const slot of slots) {
      await until(async () => (await a.admin.call(operations.getAgent, { params: { id: slot.id } })).status === 'CONNECTED', 100);
    }
    await a.admin.call(operations.createRoute, {
      body: {
        name: 'pooled',
        type: 'HTTP',
        hostname: 'pooled.test',
        target: targets[0].url,
        agents: slots.map((s, i) => ({ agentId: s.id, target: targets[i].url })),
      },
    });
    const names = async (pod: TestDaemon, n: number) => {
      const seen: Record<string, number> = {};
      for (let i = 0; i < n; i++) {
        const res = await edge(pod.edgeUrl, 'pooled.test', 'GET', `/r${i}`);
        const key = res.status === 200 ? res.text.split(' ')[0] : String(res.status);
        seen[key] = (seen[key] ?? 0) + 1;
      }
      return seen;
    };
    for (const pod of [a, b]) {
      // The route reaches the pod's table through its notification: wait until it serves, then count.
      await until(async () => (await edge(pod.edgeUrl, 'pooled.test', 'GET', '/ready')).status === 200, 100);
      expect(await names(pod, 20), pod.url).toEqual({ a: 10, b: 10 });
    }

    // Agent b (on pod B) goes: pod A stops sending it requests once B has recorded the disconnect.
    await agents[1].stop('SIGKILL');
    await until(async () => (await a.admin.call(operations.getAgent, { params: { id: slots[1].id } })).status === 'DISCONNECTED', 100);
    await until(async () => JSON.stringify(await names(a, 4)) === '{"a":4}', 100);
    expect(await names(b, 10)).toEqual({ a: 10 });
  }, 120_000);
});
