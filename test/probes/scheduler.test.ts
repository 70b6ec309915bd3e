import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createProbeMetrics } from '../../daemon/probes/metrics.ts';
import { Scheduler } from '../../daemon/probes/scheduler.ts';
import { insertResources, openContext, type TestContext } from './helpers/context.ts';

interface Target {
  url: string;
  server: Server;
  requests: number;
  maxConcurrent: number;
  close(): Promise<void>;
}

/** An HTTP server that answers after `delayMs` and records how many requests overlapped. */
async function target(delayMs = 0): Promise<Target> {
  let current = 0;
  const t = { requests: 0, maxConcurrent: 0 } as Target;
  t.server = createServer((_req, res) => {
    t.requests++;
    current++;
    t.maxConcurrent = Math.max(t.maxConcurrent, current);
    setTimeout(() => {
      current--;
      res.end('ok');
    }, delayMs);
  });
  await new Promise<void>((r) => t.server.listen(0, '127.0.0.1', r));
  t.url = `http://127.0.0.1:${(t.server.address() as { port: number }).port}/`;
  t.close = () =>
    new Promise((r) => {
      t.server.closeAllConnections();
      t.server.close(() => r());
    });
  return t;
}

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function scheduler(tc: TestContext): Promise<{ s: Scheduler; runs: Array<{ id: number; due: number; at: number }> }> {
  const s = new Scheduler(tc.ctx, tc.ctx.prober, createProbeMetrics(tc.ctx.metrics.registry), tc.ctx.config.probes!);
  const runs: Array<{ id: number; due: number; at: number }> = [];
  s.onRun = (id, due) => runs.push({ id, due, at: Date.now() });
  cleanups.push(async () => {
    await s.stop();
    await tc.ctx.prober.close();
  });
  await s.start();
  return { s, runs };
}

async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await condition()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`gave up waiting for ${what}`);
}

describe('the scheduler', () => {
  it('runs at a fixed rate: the next due time is the last due plus the interval, whatever the check takes', async () => {
    const t = await target(400); // each check takes 400 ms of a 1 s interval
    cleanups.push(() => t.close());
    const tc = await openContext();
    cleanups.push(() => tc.close());
    const first = Date.now() + 200;
    const [id] = await insertResources(tc.ctx, [{ target: t.url, interval: 1, nextRunAt: first }]);
    const { runs } = await scheduler(tc);
    await until(() => runs.length >= 3, 'three runs');
    expect(runs.slice(0, 3).map((r) => r.due)).toEqual([first, first + 1000, first + 2000]);
    expect(runs.every((r) => r.id === id && r.at >= r.due)).toBe(true);
    await until(
      async () => (await tc.ctx.db.selectFrom('check_history').select('id').where('resource_id', '=', id).execute()).length >= 2,
      'history rows',
    );
    const row = await tc.ctx.db.selectFrom('resources').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.current_status).toBe('available');
  });

  it('caps concurrent checks per host', async () => {
    const t = await target(150);
    cleanups.push(() => t.close());
    const tc = await openContext({ perHostConcurrency: 3, concurrency: 100 });
    cleanups.push(() => tc.close());
    await insertResources(
      tc.ctx,
      Array.from({ length: 12 }, () => ({ target: t.url, nextRunAt: Date.now() + 100 })),
    );
    await scheduler(tc);
    await until(() => t.requests >= 12, '12 requests');
    expect(t.maxConcurrent).toBe(3);
  });

  it('caps concurrent checks globally', async () => {
    const targets = await Promise.all([target(150), target(150), target(150)]);
    cleanups.push(() => Promise.all(targets.map((t) => t.close())));
    const tc = await openContext({ perHostConcurrency: 10, concurrency: 2 });
    cleanups.push(() => tc.close());
    let current = 0;
    let max = 0;
    for (const t of targets) {
      t.server.on('request', (_req, res) => {
        current++;
        max = Math.max(max, current);
        res.on('finish', () => current--);
      });
    }
    await insertResources(
      tc.ctx,
      targets.flatMap((t) => Array.from({ length: 4 }, () => ({ target: t.url, nextRunAt: Date.now() + 100 }))),
    );
    await scheduler(tc);
    await until(() => targets.reduce((n, t) => n + t.requests, 0) >= 12, '12 requests');
    expect(max).toBe(2);
  });

  it('skips inactive resources and follows changes and deletions at once', async () => {
    const t = await target();
    cleanups.push(() => t.close());
    const tc = await openContext();
    cleanups.push(() => tc.close());
    const [inactive] = await insertResources(tc.ctx, [{ target: t.url, active: false, nextRunAt: Date.now() }]);
    const { s, runs } = await scheduler(tc);
    expect(s.stats().scheduled).toBe(0);

    const [created] = await insertResources(tc.ctx, [{ target: t.url, interval: 3600 }]);
    tc.ctx.bus.emit('resource.changed', { id: created });
    await until(() => runs.some((r) => r.id === created), 'the new resource checked');
    expect(s.dueOf(created)).toBeGreaterThan(Date.now() + 3_500_000);

    await tc.ctx.db.updateTable('resources').set({ active: 0 }).where('id', '=', created).execute();
    tc.ctx.bus.emit('resource.changed', { id: created });
    await until(() => s.stats().scheduled === 0, 'deactivation');

    await tc.ctx.db.updateTable('resources').set({ active: 1 }).where('id', '=', inactive).execute();
    tc.ctx.bus.emit('resource.changed', { id: inactive });
    await until(() => runs.some((r) => r.id === inactive), 'activation');
    await tc.ctx.db.deleteFrom('resources').where('id', '=', inactive).execute();
    tc.ctx.bus.emit('resource.deleted', { id: inactive });
    expect(s.stats().scheduled).toBe(0);
    expect(runs.filter((r) => r.id === created)).toHaveLength(1);
  });

  it('a bulk creation (over 1,000 at once) is spread over the interval in the order it came; a single one is checked at once', async () => {
    const t = await target();
    cleanups.push(() => t.close());
    const tc = await openContext();
    cleanups.push(() => tc.close());
    const { s, runs } = await scheduler(tc);
    const ids = await insertResources(
      tc.ctx,
      Array.from({ length: 1_200 }, () => ({ target: t.url, interval: 600 })),
    );
    const started = Date.now();
    for (const id of ids) tc.ctx.bus.emit('resource.changed', { id });
    await until(() => ids.every((id) => s.dueOf(id) !== undefined), 'the burst scheduled');
    const dues = ids.map((id) => s.dueOf(id)!);
    // 600 s interval, 5 minutes at most: id k of n is due k/n of the way through them (the first is checked at once).
    for (const k of [300, 600, 900, 1_199]) {
      expect(dues[k]).toBeGreaterThanOrEqual(started + (k / ids.length) * 300_000 - 50);
      expect(dues[k]).toBeLessThanOrEqual(Date.now() + (k / ids.length) * 300_000);
    }
    expect(runs.filter((r) => ids.includes(r.id)).length).toBeLessThan(20);
    const [one] = await insertResources(tc.ctx, [{ target: t.url, interval: 600 }]);
    const before = Date.now();
    tc.ctx.bus.emit('resource.changed', { id: one });
    await until(() => runs.some((r) => r.id === one), 'the single one checked');
    const run = runs.find((r) => r.id === one)!;
    expect(run.due).toBeGreaterThanOrEqual(before);
    expect(run.at - before).toBeLessThan(5_000);
  });

  it('a restart resumes on schedule: persisted next runs are kept, overdue ones are spread, nothing bursts', async () => {
    const t = await target();
    cleanups.push(() => t.close());
    const tc = await openContext();
    const dir = tc.dataDir;
    const soon = Date.now() + 150;
    const onTime = await insertResources(
      tc.ctx,
      Array.from({ length: 5 }, () => ({ target: t.url, interval: 2, nextRunAt: soon })),
    );
    const first = await scheduler(tc);
    await until(() => first.runs.length >= 5, 'first runs');
    await first.s.stop();
    const persisted = await tc.ctx.db.selectFrom('resources').select(['id', 'next_run_at']).where('id', 'in', onTime).execute();
    expect(persisted.map((r) => Number(r.next_run_at))).toEqual(onTime.map(() => soon + 2000));
    const overdue = await insertResources(
      tc.ctx,
      Array.from({ length: 50 }, () => ({ target: t.url, interval: 30, nextRunAt: Date.now() - 3_600_000 })),
    );
    await tc.close(true);

    const again = await openContext({}, dir);
    cleanups.push(() => again.close());
    const started = Date.now();
    const second = await scheduler(again);
    for (const id of onTime) expect(second.s.dueOf(id)).toBe(soon + 2000);
    const dues = overdue.map((id) => second.s.dueOf(id)!);
    expect(Math.min(...dues)).toBeGreaterThanOrEqual(started);
    expect(Math.max(...dues)).toBeLessThanOrEqual(Date.now() + 30_000);
    // Spread over the interval, not fired together: fewer than half fall in its first fifth.
    expect(dues.filter((d) => d < started + 6_000).length).toBeLessThan(25);
    await until(() => second.runs.filter((r) => onTime.includes(r.id)).length >= 5, 'resumed runs');
    for (const run of second.runs.filter((r) => onTime.includes(r.id))) expect(run.due).toBe(soon + 2000);
  });
});
