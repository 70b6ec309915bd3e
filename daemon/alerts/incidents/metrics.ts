import { Gauge } from 'prom-client';
import type { DaemonContext } from '../../context.ts';

const SUBJECTS = ['resource', 'agent'] as const;

/**
 * `monctl_incidents_open{subject}`: open incidents of resources and of agents,
 * counted at scrape time by one grouped query on the open-incident index.
 */
export function registerIncidentMetrics(ctx: DaemonContext): void {
  new Gauge({
    name: 'monctl_incidents_open',
    help: 'Open incidents, by subject (resource or agent)',
    labelNames: ['subject'] as const,
    registers: [ctx.metrics.registry],
    async collect() {
      const counts = new Map<string, number>(SUBJECTS.map((s) => [s, 0]));
      try {
        const rows = await ctx.db
          .selectFrom('incidents')
          .select((eb) => ['subject_type', eb.fn.countAll<number>().as('n')])
          .where('resolved_at', 'is', null)
          .groupBy('subject_type')
          .execute();
        for (const row of rows) counts.set(row.subject_type, Number(row.n));
      } catch (err) {
        // A scrape during shutdown finds the database closed: report nothing rather than fail the scrape.
        ctx.log.debug({ err }, 'incident gauge not collected');
        return;
      }
      for (const [subject, n] of counts) this.set({ subject }, n);
    },
  });
}
