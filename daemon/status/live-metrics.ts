import { Counter, Gauge, type Registry } from 'prom-client';
import type { ShedLimit } from './live-caps.ts';

/**
 * Status page live streams: how many are open, and how many were ended to
 * make room for a newer one of the same client or connection (a client
 * holding more than its share shows here, not as 503s for everyone else).
 */
export function registerStreamCapMetrics(registry: Registry, open: () => number): Counter<'limit'> {
  new Gauge({
    name: 'monctl_status_streams_open',
    help: 'Open status page live streams, all pages together',
    registers: [registry],
    collect() {
      this.set(open());
    },
  });
  const shed = new Counter({
    name: 'monctl_status_streams_shed_total',
    help: 'Status page live streams ended because their client (IPv6: /64) or connection opened one more than its cap',
    labelNames: ['limit'] as const,
    registers: [registry],
  });
  for (const limit of ['client', 'connection'] satisfies ShedLimit[]) shed.inc({ limit }, 0);
  return shed;
}
