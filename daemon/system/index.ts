import { explorerRoutes } from '../docs/explorer.ts';
import { serveMetrics } from './scrape.ts';
import { moveTestClock } from './test-clock.ts';
import type { ModuleFactory } from '../module.ts';

/** Health, metrics, the OpenAPI document and the explorer. */
export const systemModule: ModuleFactory = (ctx) => ({
  name: 'system',
  handlers: {
    health({ res, principal }) {
      // DEGRADED (disk full: reads work, writes get 507) stays 200, as Spring Boot maps statuses
      // it does not know: a load balancer keeps sending reads. DOWN (draining, corrupt file) is 503.
      const condition = ctx.store.health.condition;
      const storage = condition.status;
      // Pods on PostgreSQL say how they see the shared database (one daemon's body stays as it was).
      // Where it is (user, host, port, name) is for ADMIN only: the endpoint is public.
      const admin = principal.kind === 'user' && principal.role === 'ADMIN';
      const details = {
        ...(admin ? { database: ctx.store.location } : {}),
        ...(condition.reason ? { reason: condition.reason } : {}),
        ...(condition.code ? { error: condition.code } : {}),
      };
      const components =
        ctx.store.dialect === 'postgres'
          ? {
              components: { db: { status: storage, ...(Object.keys(details).length > 0 ? { details } : {}) } },
            }
          : {};
      if (!ctx.draining && storage !== 'DOWN') return { status: storage, ...components };
      // Load balancers read the status code; the body keeps the actuator shape.
      res.writeHead(503, { 'Content-Type': 'application/json' }).end(JSON.stringify({ status: 'DOWN', ...components }));
      return undefined as never;
    },
    moveTestClock: moveTestClock(ctx),
  },
  routes(router) {
    router.get('/actuator/prometheus', (req, res) => serveMetrics(ctx, req, res));
    explorerRoutes(ctx)(router);
  },
});
