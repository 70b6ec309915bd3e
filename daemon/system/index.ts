import { explorerRoutes } from '../docs/explorer.ts';
import { serveMetrics } from '../metrics/scrape.ts';
import type { ModuleFactory } from '../module.ts';

/** Health, metrics, the OpenAPI document and the explorer. */
export const systemModule: ModuleFactory = (ctx) => ({
  name: 'system',
  handlers: {
    health({ res }) {
      if (!ctx.draining) return { status: 'UP' as const };
      // Load balancers read the status code; the body keeps the actuator shape.
      res.writeHead(503, { 'Content-Type': 'application/json' }).end(JSON.stringify({ status: 'DOWN' }));
      return undefined as never;
    },
  },
  routes(router) {
    router.get('/actuator/prometheus', (req, res) => serveMetrics(ctx, req, res));
    explorerRoutes(ctx)(router);
  },
});
