import { Gauge } from 'prom-client';
import { CURRENT_STATUSES } from '../../src/api/schemas/monitoring.ts';
import type { DaemonContext } from '../context.ts';
import { effectiveStatus } from '../probes/results.ts';
import { resourceIdRanges } from '../store/resource-id-ranges.ts';

/** Resources counted per query: at a million, one GROUP BY over the table held the event loop for over a second. */
const COUNT_PAGE = 25_000;

/**
 * `monctl_resources{status}`: resources by `currentStatus`, counted from the database at scrape
 * time, one id range at a time with a turn of the event loop between ranges (checks keep their
 * schedule while a scrape counts).
 */
export function registerMonitoringMetrics(ctx: DaemonContext): void {
  new Gauge({
    name: 'monctl_resources',
    help: 'Monitored resources by current status (available, not_available, unknown, inactive)',
    labelNames: ['status'] as const,
    registers: [ctx.metrics.registry],
    async collect() {
      const counts = new Map<string, number>(CURRENT_STATUSES.map((s) => [s, 0]));
      try {
        for await (const [from, to] of resourceIdRanges(ctx.db, COUNT_PAGE)) {
          const rows = await ctx.db
            .selectFrom('resources')
            .select((eb) => ['active', 'current_status', eb.fn.countAll<number>().as('n')])
            .where('id', '>', from)
            .where('id', '<=', to)
            .groupBy(['active', 'current_status'])
            .execute();
          for (const row of rows) {
            const status = effectiveStatus(row.active, row.current_status);
            counts.set(status, (counts.get(status) ?? 0) + Number(row.n));
          }
        }
      } catch (err) {
        // A scrape during shutdown finds the database closed: report nothing rather than fail the scrape.
        ctx.log.debug({ err }, 'resource gauge not collected');
        return;
      }
      for (const [status, n] of counts) this.set({ status }, n);
    },
  });
}
