import { registerSseMetrics } from '../events/metrics.ts';
import type { ModuleFactory } from '../module.ts';
import { agentHandlers } from './agents.ts';
import { registerPod } from './pods.ts';
import { routeLogHandlers } from './route-log.ts';
import { routeHandlers } from './routes.ts';
import { topologyHandlers } from './topology.ts';

/**
 * The tunnel's control plane: agents and their tokens, routes, the route log,
 * the topology and its stream. This daemon registers as a pod before any
 * listener accepts, so `ctx.pod.id` always answers for the data plane.
 */
export const tunnelAdminModule: ModuleFactory = async (ctx) => {
  registerSseMetrics(ctx.metrics.registry);
  const pod = await registerPod(ctx);
  return {
    name: 'tunnel-admin',
    handlers: { ...agentHandlers, ...routeHandlers, ...routeLogHandlers, ...topologyHandlers },
    async stop() {
      await pod.unregister();
    },
  };
};
