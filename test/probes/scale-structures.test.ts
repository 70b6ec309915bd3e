import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DueHeap } from '../../daemon/probes/heap.ts';
import { createProbeMetrics } from '../../daemon/probes/metrics.ts';
import { ResourceGauges } from '../../daemon/probes/resource-gauges.ts';
import { Scheduler } from '../../daemon/probes/scheduler.ts';
import { insertResources, openContext, type TestContext } from './helpers/context.ts';

/**
 * The scheduler's compact per-resource structures: the due-time heap in typed arrays, the
 * per-resource gauges rendered in chunks outside prom-client, and the next due time written
 * with each result (not only by the 5-second batch).
 */
describe('per-resource structures at scale', () => {
  it('the heap gives due times in order through growth, pops and pushes', () => {
    const heap = new DueHeap();
    const dues = Array.from({ length: 5000 }, (_, i) => (i * 7919) % 5003);
    dues.forEach((due, i) => heap.add(due, i + 1, i % 3));
    const out: number[] = [];
    for (let i = 0; i < 2500; i++) {
      out.push(heap.peekDue());
      expect(heap.peekId()).toBe(dues.indexOf(heap.peekDue()) + 1);
      heap.pop();
    }
    for (const due of [1, 2, 3]) heap.add(due, 1, 0);
    while (heap.size > 0) {
      out.push(heap.peekDue());
      heap.pop();
    }
    expect(heap.peekDue()).toBe(Number.POSITIVE_INFINITY);
    const expected = [...dues].sort((a, b) => a - b);
    expect(out.slice(0, 2500)).toEqual(expected.slice(0, 2500));
    expect(out.slice(2500)).toEqual([1, 2, 3, ...expected.slice(2500)]);
  });

  it('per-resource gauges: every series once, in several chunks, valid exposition text, gone when forgotten', () => {
    const gauges = new ResourceGauges(true);
    const timing = { dnsMs: null, connectMs: 1, tlsMs: null, firstByteMs: 2, totalMs: 3 };
    for (let id = 1; id <= 5000; id++) gauges.set(id, 'HTTP', 'daemon', 1, 0.003, timing);
    gauges.set(7, 'HTTP', 'edge "west"\\1', -1);
    gauges.forget(2, ['daemon']);
    gauges.set(5001, 'TCP', 'daemon', 0, 0.5, { ...timing, firstByteMs: null });
    const chunks = [...gauges.render()];
    expect(chunks.length).toBeGreaterThan(6);
    expect(chunks.every((c) => c.endsWith('\n'))).toBe(true);
    const text = chunks.join('');
    const ids = (name: string) => [...text.matchAll(new RegExp(`^${name}\\{resource_id="(\\d+)"`, 'gm'))].map((m) => Number(m[1]));
    const status = ids('monctl_resource_status');
    expect(status).toHaveLength(5001); // 5,000 − 1 forgotten + 1 TCP + 1 at an agent location
    expect(status).not.toContain(2);
    expect(text).toContain('monctl_resource_status{resource_id="7",type="HTTP",location="edge \\"west\\"\\\\1"} -1\n');
    expect(text).toContain(
      'monctl_resource_last_check_phase_seconds{resource_id="5001",type="TCP",location="daemon",phase="connect"} 0.001\n',
    );
    expect(text).not.toContain('resource_id="5001",type="TCP",location="daemon",phase="first_byte"');
    expect(ids('monctl_resource_last_check_duration_seconds')).toHaveLength(5000); // the agent's check did not run
    const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(check.stdout + check.stderr).toBe('');
    // A forgotten slot is reused.
    gauges.set(9999, 'HTTP', 'daemon', 1);
    expect([...gauges.render()].join('')).toContain('monctl_resource_status{resource_id="9999"');
  });

  describe('the scheduler', () => {
    let tc: TestContext;
    let server: Server;
    let url: string;
    beforeAll(async () => {
      server = createServer((_req, res) => res.end('ok'));
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
      tc = await openContext();
    });
    afterAll(async () => {
      await tc?.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    });

    it('writes the next due time with the result, before the next-run batch (every 5 s) would', async () => {
      const [id] = await insertResources(tc.ctx, [{ target: url, interval: 3600, nextRunAt: Date.now() + 50 }]);
      const s = new Scheduler(tc.ctx, tc.ctx.prober, createProbeMetrics(new Registry()), tc.ctx.config.probes);
      await s.start();
      try {
        const row = async () =>
          tc.ctx.db.selectFrom('resources').select(['latest_checked_at', 'next_run_at']).where('id', '=', id).executeTakeFirstOrThrow();
        for (let i = 0; i < 200 && (await row()).latest_checked_at === null; i++) await new Promise((r) => setTimeout(r, 10));
        const { latest_checked_at, next_run_at } = await row();
        expect(latest_checked_at).not.toBeNull();
        expect(Number(next_run_at)).toBe(s.dueOf(id));
        expect(Number(next_run_at)).toBeGreaterThan(Date.now() + 3_500_000);
      } finally {
        await s.stop();
      }
    });
  });
});
