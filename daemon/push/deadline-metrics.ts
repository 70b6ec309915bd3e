import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** The judge's metrics (docs/API.md#push-checks). */
export interface DeadlineMetrics {
  missed: Counter;
  delay: Histogram;
}

/** `late` counts from the database at each scrape: every pod reports the same, whoever judged. */
export function createDeadlineMetrics(registry: Registry, countLate: () => Promise<number | undefined>): DeadlineMetrics {
  const registers = [registry];
  new Gauge({
    name: 'monctl_push_late',
    registers,
    help: 'Push checks judged late (MISSED_PING) and not pinged since',
    async collect() {
      const late = await countLate(); // undefined: the database could not say (shutting down)
      if (late !== undefined) this.set(late);
    },
  });
  return {
    missed: new Counter({ name: 'monctl_push_missed_total', registers, help: 'Push check deadlines judged missed by this daemon' }),
    delay: new Histogram({
      name: 'monctl_push_judge_delay_seconds',
      registers,
      help: 'From a push check deadline (its expected time plus grace) to its MISSED_PING being recorded',
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 1, 2, 5, 10, 30],
    }),
  };
}
