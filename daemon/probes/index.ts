import type { DaemonContext } from '../context.ts';
import type { DaemonModule } from '../module.ts';
import { defaultProbeConfig } from './config.ts';
import { createProbeMetrics } from './metrics.ts';
import { getProber } from './prober.ts';
import { runRollups } from './rollups.ts';
import { Scheduler } from './scheduler.ts';

/** Rollups and retention run this often (and once shortly after start). */
const ROLLUP_EVERY_MS = 5 * 60_000;

/**
 * The probes capability: the central scheduler, the result batches, the
 * probe metrics, and the rollup/retention job. The on-demand check of the
 * monitoring API uses the same prober (`getProber`).
 */
export function probesModule(ctx: DaemonContext): DaemonModule {
  const config = ctx.config.probes ?? defaultProbeConfig();
  const prober = getProber(ctx);
  const metrics = createProbeMetrics(ctx.metrics.registry);
  const scheduler = new Scheduler(ctx, prober, metrics, config);
  let rollupTimer: NodeJS.Timeout | undefined;
  let rollup: Promise<unknown> = Promise.resolve();
  let stopping = false;

  const roll = () => {
    rollup = runRollups(ctx.db, config.historyRetentionDays).then(
      (r) => { if (r.hours || r.days || r.deleted) ctx.log.info(r, 'check history rolled up'); },
      (err) => { if (!stopping) ctx.log.error({ err }, 'check history rollup failed'); },
    );
  };

  return {
    name: 'probes',
    async start() {
      if (config.schedulerEnabled) await scheduler.start();
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
      await scheduler.stop();
      await rollup;
      await prober.close();
    },
  };
}
