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

const ROUTE_MS = 1000;
const DISPATCH_MS = 500;
const REMIND_MS = 5000;

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
  const loops = [
    new Loop(ctx.log, 'alert routing', ROUTE_MS, () => router.routeOnce()),
    new Loop(ctx.log, 'alert reminders', REMIND_MS, () => remindOnce(ctx, rules)),
    new Loop(ctx.log, 'notification dispatch', DISPATCH_MS, () => dispatcher.dispatchOnce()),
  ];
  return {
    name: 'alerts',
    handlers: alertRuleHandlers(() => rules.invalidate()),
    async start() {
      // One SQLite file has one daemon (the data-dir lock): whatever is claimed at start was claimed by a dead run.
      await dispatcher.releaseStale(ctx.db.getExecutor().adapter instanceof SqliteAdapter);
      for (const loop of loops) loop.start();
    },
    async stop() {
      await Promise.all(loops.map((loop) => loop.stop()));
      await dispatcher.stop();
    },
  };
};
