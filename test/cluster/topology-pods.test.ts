import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import type { Pod } from '../../src/api/schemas/tunnel.ts';
import { eventually, startTarget } from '../alerts/world.ts';
import { adminRunner } from '../cli/run.ts';
import { type Pods, startPods } from './pods.ts';

const RESOURCES = 64;

/**
 * `monctl topology` lists the pods with their load (issue 18): 3 pods on one
 * PostgreSQL database share 64 resources (one per shard); the topology of
 * any pod shows every pod with its shards, resources and checks, which add
 * up; a SIGKILLed pod leaves the list once its lease runs out.
 */
describe('pods in the topology', () => {
  let cluster: Pods;
  let target: Awaited<ReturnType<typeof startTarget>>;
  let home: string;

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'monctl-topo-'));
    target = await startTarget();
    cluster = await startPods(3);
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
    await target?.close();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it('shows every pod with its load, from any pod, and drops a killed pod', async () => {
    const b = cluster.pod('pod-b');
    const pods = async () => (await b.admin.call(operations.getTopology)).pods;
    const loaded = (list: Pod[]) =>
      list.length === 3 &&
      list.every((p) => p.load && p.load.shards! > 0 && p.load.checksTotal > 0) &&
      list.reduce((n, p) => n + p.load!.resources, 0) === RESOURCES &&
      list.reduce((n, p) => n + p.load!.shards!, 0) === 64;
    await eventually('the pods share the shards', async () => (await pods()).every((p) => (p.load?.shards ?? 0) >= 20), 30_000);
    for (let i = 0; i < RESOURCES; i++) {
      await cluster.pod('pod-a').admin.call(operations.createResource, {
        body: { name: `r-${i}`, resourceType: 'HTTP', target: `${target.url}/${i}`, intervalSeconds: 10 },
      });
    }
    await eventually('every pod checks its share', async () => loaded(await pods()), 30_000);

    const cli = await adminRunner(b, home)(['topology']);
    expect(cli.code, cli.stderr).toBe(0);
    const lines = cli.stdout.split('\n').filter((l) => l.startsWith('pod '));
    expect(lines.map((l) => l.split(' ')[1]).sort()).toEqual(['pod-a', 'pod-b', 'pod-c']);
    for (const line of lines) expect(line).toMatch(/ {2}load: \d+ shards, \d+ resources, [\d,]+ checks, 0 agents$/);

    await cluster.pod('pod-c').stop('SIGKILL');
    await eventually(
      'pod-c leaves the topology',
      async () => {
        const list = await pods();
        return list.length === 2 && !list.some((p) => p.name === 'pod-c');
      },
      20_000,
    );
    await eventually('the others take its shards', async () => (await pods()).reduce((n, p) => n + p.load!.shards!, 0) === 64, 20_000);
  }, 120_000);
});
