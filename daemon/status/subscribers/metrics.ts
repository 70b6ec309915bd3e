import { Counter, Gauge, Histogram } from 'prom-client';
import type { DaemonContext } from '../../context.ts';
import type { DeliveryResult } from './dispatch.ts';

export interface SubscriberMetrics {
  attempt(kind: string, result: DeliveryResult, seconds: number): void;
  /** One pass of a loop ended (`fan-out`, `dispatch`). */
  pass(loop: string): void;
}

/**
 * `monctl_subscriber_deliveries_total{kind,result}` and `monctl_subscriber_delivery_seconds{kind}`
 * per attempt (kind: EMAIL, WEBHOOK); `monctl_subscriber_outbox_pending{stage}` counted from the
 * database at scrape time (messages not fanned out, deliveries not sent), the backlog every pod
 * shares; `monctl_subscriber_passes_total{loop}`: with an empty backlog, two more passes of each
 * loop mean this pod has sent what it would (tests wait on it rather than sleep), as the alerts'
 * `monctl_alert_passes_total`.
 */
export function registerSubscriberMetrics(ctx: Pick<DaemonContext, 'db' | 'log' | 'metrics'>): SubscriberMetrics {
  const registers = [ctx.metrics.registry];
  const total = new Counter({
    name: 'monctl_subscriber_deliveries_total',
    help: 'Status page subscriber delivery attempts by kind (EMAIL, WEBHOOK) and result (sent, retry, failed)',
    labelNames: ['kind', 'result'] as const,
    registers,
  });
  const seconds = new Histogram({
    name: 'monctl_subscriber_delivery_seconds',
    help: 'Time one subscriber delivery attempt took, by kind',
    labelNames: ['kind'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });
  const passes = new Counter({
    name: 'monctl_subscriber_passes_total',
    help: 'Passes of the subscriber loops of this pod (fan-out, dispatch)',
    labelNames: ['loop'] as const,
    registers,
  });
  new Gauge({
    name: 'monctl_subscriber_outbox_pending',
    help: 'Subscriber work waiting: messages not yet fanned out, deliveries not yet sent',
    labelNames: ['stage'] as const,
    registers,
    async collect() {
      try {
        const count = (table: 'subscriber_messages' | 'subscriber_deliveries') =>
          ctx.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n'));
        const [messages, deliveries] = await Promise.all([
          count('subscriber_messages').where('fanned_at', 'is', null).executeTakeFirstOrThrow(),
          count('subscriber_deliveries').where('state', '=', 'pending').executeTakeFirstOrThrow(),
        ]);
        this.set({ stage: 'messages' }, Number(messages.n));
        this.set({ stage: 'deliveries' }, Number(deliveries.n));
      } catch (err) {
        ctx.log.debug({ err }, 'subscriber outbox gauge not collected');
      }
    },
  });
  return {
    attempt(kind, result, s) {
      total.inc({ kind, result });
      seconds.observe({ kind }, s);
    },
    pass(loop) {
      passes.inc({ loop });
    },
  };
}
