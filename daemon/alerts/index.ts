import { SqliteAdapter } from 'kysely';
import { MONITORING_CHANNEL } from '../../src/api/schemas/monitoring.ts';
import { NOTIFICATION_FAILED } from '../../src/api/schemas/alert-rules.ts';
import { formatDateTime } from '../../src/time.ts';
import type { ModuleFactory } from '../module.ts';
import { Dispatcher } from './delivery/dispatcher.ts';
import { loadSender } from './notifiers/senders.ts';
import { registerAlertMetrics } from './metrics.ts';
import { Loop } from './loop.ts';
import { remindOnce } from './routing/reminders.ts';
import { Router } from './routing/router.ts';
import { alertRuleHandlers } from './rules/handlers.ts';
import { RuleCache } from './rules/rule-cache.ts';

/**
 * Alerting: alert rules, and the pipeline from the outbox (alert events
 * written with the changes they announce) through routing and grouping to
 * delivery. Every step claims its rows in the database, so it runs the same
 * on one daemon or several sharing a database. See daemon/alerts/types.ts.
 */
export const alertsModule: ModuleFactory = (ctx) => {
  const rules = new RuleCache(ctx.db);
  // Pods: rules and windows changed through another pod.
  ctx.cluster?.onTables(['alert_rules'], () => rules.invalidate());
  ctx.cluster?.onTables(['maintenance_windows', 'resource_groups'], () => ctx.maintenance.reload());
  const pod = ctx.pod.name;
  const metrics = registerAlertMetrics(ctx);
  const router = new Router(ctx, rules, pod);
  const dispatcher = new Dispatcher({
    db: ctx.db,
    log: ctx.log,
    pod,
    loadSender: (id) => loadSender(ctx, id),
    retryBaseMs: ctx.config.notifierRetryBaseMs,
    timeoutMs: ctx.config.notifierTimeoutMs,
    onAttempt: metrics.attempt,
    onFailed: (failed) => {
      ctx.log.warn(failed, 'notification given up');
      ctx.events.channel(MONITORING_CHANNEL).publish(NOTIFICATION_FAILED, { ...failed, at: formatDateTime(Date.now()) });
    },
  });
  // The ticks (--alert-tick, 1 s) pick up what other pods wrote and what comes due (group waits,
  // retries, reminders); work written here wakes its loop at once: new events the router, routed
  // events and reminders the dispatcher.
  const tick = ctx.config.alertTickMs;
  const dispatch = new Loop(
    ctx.log,
    'notification dispatch',
    Math.max(1, Math.round(tick / 2)),
    () => dispatcher.dispatchOnce(),
    () => metrics.pass('dispatch'),
  );
  const wake = (n: number) => {
    if (n > 0) dispatch.nudge();
  };
  const routing = new Loop(
    ctx.log,
    'alert routing',
    tick,
    () => router.routeOnce().then(wake),
    () => metrics.pass('routing'),
  );
  const reminders = new Loop(
    ctx.log,
    'alert reminders',
    tick * 5,
    () => remindOnce(ctx, rules).then(wake),
    () => metrics.pass('reminders'),
  );
  const loops = [routing, reminders, dispatch];
  const onEnqueued = () => routing.nudge();
  return {
    name: 'alerts',
    // A rule written here may have put catch-ups of open incidents in the outbox (rules/catch-up.ts).
    handlers: alertRuleHandlers(() => {
      rules.invalidate();
      routing.nudge();
    }),
    async start() {
      // One SQLite file has one daemon (the data-dir lock): whatever is claimed at start was claimed by a dead run.
      await dispatcher.releaseStale(ctx.db.getExecutor().adapter instanceof SqliteAdapter);
      for (const loop of loops) loop.start();
      ctx.bus.on('alerts.enqueued', onEnqueued);
    },
    async stop() {
      ctx.bus.off('alerts.enqueued', onEnqueued);
      await Promise.all(loops.map((loop) => loop.stop()));
      await dispatcher.stop();
    },
  };
};
