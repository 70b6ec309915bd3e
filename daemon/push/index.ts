import type { DaemonContext } from '../context.ts';
import type { DaemonModule } from '../module.ts';
import { createDeadlineMetrics } from './deadline-metrics.ts';
import { countLate } from './deadline-store.ts';
import { DeadlineJudge } from './deadlines.ts';

/**
 * The push capability (docs/API.md#push-checks): the ping endpoints on the API and edge
 * listeners, and the deadline judge that marks a silent check MISSED_PING. Resources of type
 * PUSH are created and edited through the monitoring API like any other; the probe scheduler
 * leaves them alone.
 */
export function pushModule(ctx: DaemonContext): DaemonModule {
  const lateCount = () =>
    countLate(ctx.db).catch((err) => {
      ctx.log.debug({ err }, 'push late gauge not collected'); // a scrape during shutdown finds the database closed
      return undefined;
    });
  const judge = new DeadlineJudge(ctx, createDeadlineMetrics(ctx.metrics.registry, lateCount));
  return {
    name: 'push',
    start: () => judge.start(),
    stop: () => judge.stop(), // before monitoring and the store: nothing is recorded after it
  };
}
