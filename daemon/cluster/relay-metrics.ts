import { Counter, Gauge, type Registry } from 'prom-client';

/** out: published here, to be announced to the pods; in: announced by a pod, to be delivered here. */
export type Direction = 'out' | 'in';
/** full: shed at the cap; failed: an announcement (out) or a spilled payload's read (in) failed. */
export type LossReason = 'full' | 'failed';

export type CountLoss = (direction: Direction, reason: LossReason, events: number) => void;

/**
 * The relay's metrics: events waiting in each direction (read at scrape
 * time) and events lost, whose channels then restart on every pod.
 */
export function registerRelayMetrics(registry: Registry, waiting: (direction: Direction) => number): CountLoss {
  new Gauge({
    name: 'monctl_pod_events_waiting',
    help: 'Events of cluster-wide channels waiting: out, to be announced to the pods (queued and being announced); in, arrived and not yet delivered',
    labelNames: ['direction'] as const,
    registers: [registry],
    collect() {
      for (const direction of ['out', 'in'] as const) this.set({ direction }, waiting(direction));
    },
  });
  const lost = new Counter({
    name: 'monctl_pod_events_shed_total',
    help: 'Events of cluster-wide channels lost: shed at the cap (full) or not announced or read (failed); their channels restart on every pod',
    labelNames: ['direction', 'reason'] as const,
    registers: [registry],
  });
  // Present from the start, so that a dashboard sees 0 rather than nothing.
  for (const direction of ['out', 'in'] as const) for (const reason of ['full', 'failed'] as const) lost.inc({ direction, reason }, 0);
  return (direction, reason, events) => lost.inc({ direction, reason }, events);
}
