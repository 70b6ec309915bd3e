/**
 * `npm run bench:resource-memory`: the heap each per-resource structure of the daemon takes, measured
 * with the daemon's own code in this process (V8 heap after a full GC, and the typed arrays'
 * buffers) at N and 2N resources (default N = 100,000): the scheduler (its entries and due-time
 * heap, built by `Scheduler.start()` from a real SQLite file), the per-resource gauges, the
 * visibility cache, and prom-client series as the gauges were kept before. Bytes per resource are
 * the growth from N to 2N ÷ N, so fixed costs fall out. `--resources N` sets N.
 */
import { sql } from 'kysely';
import { Registry, Gauge } from 'prom-client';
import { cpus, loadavg } from 'node:os';
import { openContext } from '../test/probes/helpers/context.ts';
import { createProbeMetrics } from '../daemon/probes/metrics.ts';
import { ResourceGauges } from '../daemon/probes/resource-gauges.ts';
import { Scheduler } from '../daemon/probes/scheduler.ts';
import { VisibilityCache } from '../daemon/monitoring/visibility.ts';
import type { DaemonContext } from '../daemon/context.ts';
import { flag, fmt } from './lib/load.ts';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc (npm run bench:resource-memory)');

/** Heap and array buffers after full collections, bytes. */
function used(): number {
  for (let i = 0; i < 3; i++) gc!();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

const TIMING = { dnsMs: null, connectMs: 0.4, tlsMs: null, firstByteMs: 1.2, totalMs: 1.5 };

/** Bytes per resource of what `build(count)` keeps, from its growth between N and 2N resources. */
async function perResource(n: number, build: (count: number) => Promise<unknown>): Promise<number> {
  const sizes: number[] = [];
  // Both are kept to the end: an async frame may hold a value after its last use, so each is measured with the other alive.
  const kept: unknown[] = [];
  for (const count of [n, 2 * n]) {
    const before = used();
    kept.push(await build(count));
    sizes.push(used() - before);
  }
  if (kept.includes(undefined)) throw new Error('nothing kept');
  return (sizes[1] - sizes[0]) / n;
}

async function main(): Promise<void> {
  const n = flag('resources', 100_000);
  console.log(`resource memory bench: heap per resource of each structure, from N = ${n} to 2N`);
  console.log(
    `CPU: ${cpus()[0]?.model ?? 'unknown'} (${cpus().length} cores); load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const tc = await openContext({ concurrency: 1 });
  try {
    // Plain HTTP resources every 300 s, next due in a day: the scheduler holds them without checking any.
    const later = Date.now() + 86_400_000;
    const fill = async (count: number) => {
      await sql`DELETE FROM resources WHERE id > ${count}`.execute(tc.ctx.db);
      await sql`WITH RECURSIVE seq(i) AS (SELECT COALESCE(MAX(id), 0) + 1 FROM resources UNION ALL SELECT i + 1 FROM seq WHERE i < ${count})
        INSERT INTO resources (id, name, resource_type, target, skip_tls, recursive, active, interval_seconds, created_at, updated_at, next_run_at, current_status)
        SELECT i, 'bench-' || i, 'HTTP', 'http://127.0.0.1:8080/r/' || i, 0, 0, 1, 300, 0, 0, ${later}, 'unknown' FROM seq WHERE i <= ${count}`.execute(
        tc.ctx.db,
      );
    };
    const rows: Array<[string, number]> = [];
    const measure = async (name: string, build: (count: number) => Promise<unknown>) => {
      rows.push([name, await perResource(n, build)]);
      console.log(`${name.padEnd(58)} ${fmt(rows.at(-1)![1], 0).padStart(6)} bytes per resource`);
    };
    await measure('scheduler (entries, check inputs, due-time heap)', async (count) => {
      await fill(count);
      const s = new Scheduler(tc.ctx, tc.ctx.prober, createProbeMetrics(new Registry()), tc.ctx.config.probes);
      await s.start();
      await s.stop();
      return s;
    });
    for (const phases of [false, true]) {
      await measure(`per-resource gauges, typed arrays${phases ? ', with last phases (all)' : ''}`, async (count) => {
        const g = new ResourceGauges(phases);
        for (let id = 1; id <= count; id++) g.set(id, 'HTTP', 'daemon', 1, 0.0015, TIMING);
        return g;
      });
    }
    await measure('per-resource gauges as prom-client series (before), all', async (count) => {
      const registers = [new Registry()];
      const labelNames = ['resource_id', 'type', 'location'] as const;
      const status = new Gauge({ name: 's', help: 's', registers, labelNames });
      const last = new Gauge({ name: 'd', help: 'd', registers, labelNames });
      const phase = new Gauge({ name: 'p', help: 'p', registers, labelNames: [...labelNames, 'phase'] });
      for (let id = 1; id <= count; id++) {
        const labels = { resource_id: String(id), type: 'HTTP', location: 'daemon' };
        status.set(labels, 1);
        last.set(labels, 0.0015);
        for (const p of ['connect', 'first_byte', 'total']) phase.set({ ...labels, phase: p }, 0.001);
      }
      return registers;
    });
    await measure('visibility cache', async (count) => {
      await fill(count);
      const v = new VisibilityCache(tc.ctx as unknown as DaemonContext);
      await v.reload();
      return v;
    });
  } finally {
    await tc.close();
  }
}

await main();
