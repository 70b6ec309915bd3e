import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { bearer, send } from '../helpers/http.ts';
import { queryDb } from '../helpers/test-database.ts';
import { startAgent, type TestAgent, until } from '../tunnel/helpers.ts';
import { type Pods, startPods } from './pods.ts';

/**
 * Resources checked at an agent when several pods share a database (issues
 * 18 and 19): each resource's rounds run on the pod holding its shard, and a
 * pod sends checks only over its own agent sessions. With the agent connected
 * to pod-a, the resources pod-a holds are checked there; those pod-b holds
 * read `unknown`, naming the pod the agent is connected to (never a failure).
 */
let cluster: Pods;
let server: Server;
let agent: TestAgent;
let dir: string;

beforeAll(async () => {
  server = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cluster = await startPods(2);
  dir = mkdtempSync(join(tmpdir(), 'monctl-pods-agent-'));
}, 60_000);
afterAll(async () => {
  await agent?.stop('SIGKILL');
  await cluster?.stop();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it('a resource located at an agent is checked by the pod the agent is connected to; another pod reads unknown, naming it', async () => {
  const a = cluster.pod('pod-a');
  const created = await a.admin.call(operations.createAgent, { body: { name: 'office' } });
  const { token } = await a.admin.call(operations.rotateAgentToken, { params: { id: created.id } });
  writeFileSync(join(dir, 'token'), `${token}\n`, { mode: 0o600 });
  agent = startAgent(a.url, join(dir, 'token'));
  await until(async () => (await a.admin.call(operations.getAgent, { params: { id: created.id } })).status === 'CONNECTED');
  const shardsOf = async (pod: string) => new Set((await queryDb<{ shard: number }>(a,
    'SELECT l.shard FROM shard_leases l JOIN cluster_members m ON m.instance = l.holder WHERE m.pod_name = ?', pod)).map((r) => r.shard));
  await until(async () => (await shardsOf('pod-a')).size === 32 && (await shardsOf('pod-b')).size === 32, 200);

  const target = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const [onA, onB] = [await shardsOf('pod-a'), await shardsOf('pod-b')];
  const ids: number[] = [];
  // Ids fall into shards in turn: create until each pod holds two of them.
  const held = (shards: Set<number>) => ids.filter((id) => shards.has(id % 64)).length;
  for (let i = 0; held(onA) < 2 || held(onB) < 2; i++) {
    const res = await send(a.url, 'POST', '/api/resources', {
      headers: { ...bearer(a.adminKey), 'content-type': 'application/json' },
      body: JSON.stringify({ name: `located-${i}`, resourceType: 'HTTP', target, intervalSeconds: 10, locations: ['office'] }),
    });
    expect(res.status).toBe(200);
    ids.push(res.json().id);
  }
  const detail = async (id: number) => (await send(a.url, 'GET', `/admin/api/resources/${id}`, { headers: bearer(a.adminKey) })).json();
  const results = await until(async () => {
    const views = await Promise.all(ids.map(detail));
    return views.every((v) => v.locationResults[0]?.checkedAt) ? views : undefined;
  }, 250);
  let seenA = 0;
  let seenB = 0;
  for (const view of results) {
    const [result] = view.locationResults;
    if (onA.has(view.id % 64)) {
      seenA++;
      expect(result, JSON.stringify(result)).toMatchObject({ location: 'office', status: 'available' });
      expect(view.currentStatus).toBe('available');
    } else {
      expect(onB.has(view.id % 64)).toBe(true);
      seenB++;
      expect(result).toMatchObject({ location: 'office', status: 'unknown', message: 'agent office is connected to pod pod-a, not to pod pod-b which checks this resource' });
      expect(view.currentStatus).toBe('unknown');
    }
  }
  expect(seenA).toBeGreaterThan(0);
  expect(seenB).toBeGreaterThan(0);
}, 90_000);
