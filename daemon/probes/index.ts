import type { DaemonContext } from '../context.ts';
import type { DaemonModule } from '../module.ts';
import { createProbeMetrics } from './metrics.ts';
import { runHistoryJob } from './history-job.ts';
import { scheduledShards } from './scheduled-shards.ts';
import type { ShardLeases } from '../cluster/shard-leases.ts';
import { Scheduler } from './scheduler.ts';

/** Rollups and retention run this often (and once shortly after start). */
const ROLLUP_EVERY_MS = 5 * 60_000;

/**
 * The probes capability: the central scheduler, the result batches, the
 * probe metrics, and the rollup/retention job. The on-demand check of the
 * monitoring API uses the same prober (`ctx.prober`).
 */
export function probesModule(ctx: DaemonContext): DaemonModule {
  const config = ctx.config.probes;
  const metrics = createProbeMetrics(ctx.metrics.registry, { perResourcePhases: ctx.config.metrics.detail === 'all' });
  ctx.metrics.rendered.push(() => metrics.resources.render());
  // Pods on PostgreSQL schedule the resources of the shards they lease; one daemon schedules them all.
  let leases: ShardLeases | undefined;
  const scheduler = new Scheduler(
    ctx,
    ctx.prober,
    metrics,
    config,
    ctx.store?.dialect === 'postgres' ? { owns: (id) => leases?.owns(id) ?? false } : undefined,
  );
  let rollupTimer: NodeJS.Timeout | undefined;
  let rollup: Promise<unknown> = Promise.resolve();
  let stopping = false;

  let rolling = false;
  const roll = () => {
    if (rolling || (leases && !leases.leader)) return; // pods: the holder of shard 0 rolls up for everyone
    rolling = true;
    rollup = runHistoryJob(ctx.db, config, ctx.clock.now())
      .then(
        (r) => {
          if (r.hours || r.days || r.deleted || r.thinned) ctx.log.info(r, 'check history rolled up');
        },
        (err) => {
          if (!stopping) ctx.log.error({ err }, 'check history rollup failed');
        },
      )
      .finally(() => {
        rolling = false;
      });
  };
  // A test daemon's clock jump runs the job at once (tests of rollups and the size budget wait on it, not 30 s).
  const offJump = ctx.clock.onJump(roll);

  return {
    name: 'probes',
    async start() {
      if (config.schedulerEnabled) {
        await scheduler.start();
        if (ctx.store?.dialect === 'postgres') {
          leases = scheduledShards(ctx, () => scheduler);
          await leases.start();
        }
      }
      rollupTimer = setTimeout(function again() {
        roll();
        rollupTimer = setTimeout(again, ROLLUP_EVERY_MS);
        rollupTimer.unref();
      }, 30_000);
      rollupTimer.unref();
    },
    async stop() {
      stopping = true;
      clearTimeout(rollupTimer);
      offJump();
      await leases?.stop();
      await scheduler.stop();
      await rollup;
    },
  };
}
