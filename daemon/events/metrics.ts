import { Counter, Gauge, type Registry } from 'prom-client';
import { streamStats } from './sse.ts';

/**
 * SSE metrics, read at scrape time from the stream bookkeeping of sse.ts:
 * open subscribers per channel family (`topology`, `route-log`, `events`, …)
 * and subscribers cut off for not keeping up.
 */
export function registerSseMetrics(registry: Registry): void {
  if (registry.getSingleMetric('monctl_sse_subscribers')) return;
  new Gauge({
    name: 'monctl_sse_subscribers',
    help: 'Open Server-Sent Events subscribers, by channel family',
    labelNames: ['channel'] as const,
    registers: [registry],
    collect() {
      this.reset();
      this.set({ channel: 'topology' }, 0); // always present, so a dashboard sees 0 rather than nothing
      for (const [channel, n] of streamStats.open) this.set({ channel }, n);
    },
  });
  let reported = 0;
  new Counter({
    name: 'monctl_sse_subscribers_cut_off_total',
    help: 'SSE subscribers disconnected because their unsent events passed the limit',
    registers: [registry],
    collect() {
      this.inc(streamStats.cutOff - reported);
      reported = streamStats.cutOff;
    },
  });
}
