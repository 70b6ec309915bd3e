import type { ModuleFactory } from '../../module.ts';
import { AgentIncidentSweep } from '../agents/agent-incidents.ts';
import { maintenanceHandlers } from '../maintenance/handlers.ts';
import { incidentHandlers } from './handlers.ts';
import { registerIncidentMetrics } from './metrics.ts';

/**
 * The producing side of alerts: resource incidents are opened by
 * the result writer (engine.ts); this module runs the agent incident sweep,
 * counts open incidents (the windows it edits are ctx.maintenance), and serves
 * `/admin/api/incidents` and `/admin/api/maintenance`.
 */
export const incidentsModule: ModuleFactory = (ctx) => {
  const sweep = new AgentIncidentSweep(ctx);
  registerIncidentMetrics(ctx);
  return {
    name: 'incidents',
    handlers: { ...incidentHandlers, ...maintenanceHandlers },
    start() {
      sweep.start();
    },
    async stop() {
      await sweep.stop();
    },
  };
};
