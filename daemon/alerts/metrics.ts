import { Counter, Gauge, Histogram } from 'prom-client';
import type { DaemonContext } from '../context.ts';

export interface AlertMetrics {
  attempt(notifier: string, result: 'sent' | 'retry' | 'failed', seconds: number): void;
  /** One pass of an alert loop ended (`routing`, `reminders`, `dispatch`). */
  pass(loop: string): void;
}

/**
 * `monctl_notifications_total{notifier,result}` and
 * `monctl_notification_delivery_seconds{notifier}` per attempt, and
 * `monctl_outbox_pending{stage}` counted from the database at scrape time
 * (events not yet routed, notifications not yet sent), so every pod reports
 * the shared backlog. `monctl_alert_passes_total{loop}` counts the passes of
 * this pod's loops: with an empty backlog, two more passes of each mean that
 * whatever this pod would still send is sent (tests wait on it, not on sleeps).
 */
export function registerAlertMetrics(ctx: DaemonContext): AlertMetrics {
  const registers = [ctx.metrics.registry];
  const total = new Counter({
    name: 'monctl_notifications_total',
    help: 'Notification delivery attempts by notifier and result (sent, retry, failed)',
    labelNames: ['notifier', 'result'] as const,
    registers,
  });
  const seconds = new Histogram({
    name: 'monctl_notification_delivery_seconds',
    help: 'Time one delivery attempt took, by notifier',
    labelNames: ['notifier'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });
  const passes = new Counter({
    name: 'monctl_alert_passes_total',
    help: 'Passes of the alert loops of this pod (routing, reminders, dispatch)',
    labelNames: ['loop'] as const,
    registers,
  });
  new Gauge({
    name: 'monctl_outbox_pending',
    help: 'Alert work waiting: events not yet routed, notifications not yet delivered',
    labelNames: ['stage'] as const,
    registers,
    async collect() {
      try {
        const [events, notifications] = await Promise.all([
          ctx.db
            .selectFrom('alert_events')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('routed_at', 'is', null)
            .executeTakeFirstOrThrow(),
          ctx.db
            .selectFrom('notifications')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('state', '=', 'pending')
            .executeTakeFirstOrThrow(),
        ]);
        this.set({ stage: 'events' }, Number(events.n));
        this.set({ stage: 'notifications' }, Number(notifications.n));
      } catch (err) {
        ctx.log.debug({ err }, 'outbox gauge not collected');
      }
    },
  });
  return {
    attempt(notifier, result, s) {
      total.inc({ notifier, result });
      seconds.observe({ notifier }, s);
    },
    pass(loop) {
      passes.inc({ loop });
    },
  };
}
