import { SqliteAdapter } from 'kysely';
import { Loop } from '../../alerts/loop.ts';
import type { DaemonContext } from '../../context.ts';
import { SubscriberDispatcher } from './dispatch.ts';
import { FAN_OUT_BATCH, fanOutOnce } from './fan-out.ts';
import { registerSubscriberMetrics } from './metrics.ts';

/**
 * The subscribers' outbox on its way out, on every pod: the fan-out (messages into one delivery
 * per recipient) and the dispatcher (deliveries sent, retried). A commit to the outbox on this pod
 * wakes the fan-out ('status.subscribers.enqueued'), whose deliveries wake the dispatcher; the
 * ticks pick up what other pods wrote (fan-out every 5 alert ticks, 5 s by default) and what comes
 * due (retries: dispatch every alert tick).
 */
export function subscriberDelivery(ctx: DaemonContext): { start(): Promise<void>; stop(): Promise<void> } {
  const metrics = registerSubscriberMetrics(ctx);
  const dispatcher = new SubscriberDispatcher(ctx, { onAttempt: metrics.attempt });
  const tick = ctx.config.alertTickMs;
  const dispatch = new Loop(
    ctx.log,
    'subscriber dispatch',
    tick,
    () => dispatcher.dispatchOnce(),
    () => metrics.pass('dispatch'),
  );
  const fanOut = new Loop(
    ctx.log,
    'subscriber fan-out',
    tick * 5,
    async () => {
      const done = await fanOutOnce(ctx.db, ctx.pod.name);
      if (done.deliveries > 0) dispatch.nudge();
      // A full batch: more may be waiting behind it.
      if (done.messages >= FAN_OUT_BATCH) fanOut.nudge();
    },
    () => metrics.pass('fan-out'),
  );
  const onEnqueued = () => fanOut.nudge();
  return {
    async start() {
      // One SQLite file has one daemon (the data-dir lock): whatever is claimed at start was claimed by a dead run.
      await dispatcher.releaseStale(ctx.db.getExecutor().adapter instanceof SqliteAdapter);
      fanOut.start();
      dispatch.start();
      ctx.bus.on('status.subscribers.enqueued', onEnqueued);
    },
    async stop() {
      ctx.bus.off('status.subscribers.enqueued', onEnqueued);
      await Promise.all([fanOut.stop(), dispatch.stop()]);
      await dispatcher.stop();
    },
  };
}
