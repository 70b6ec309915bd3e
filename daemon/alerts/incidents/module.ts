import type { ModuleFactory } from '../../module.ts';
import { AgentIncidentSweep } from '../agents/agent-incidents.ts';
import { getMaintenance } from '../maintenance/cache.ts';
import { maintenanceHandlers } from '../maintenance/handlers.ts';
import { incidentHandlers } from './handlers.ts';
import { registerIncidentMetrics } from './metrics.ts';

/**
 * The producing side of alerts: resource incidents are opened by
 * the result writer (engine.ts); this module runs the agent incident sweep,
 * keeps the maintenance windows in memory, counts open incidents, and serves
 * `/admin/api/incidents` and `/admin/api/maintenance`.
 */
export const incidentsModule: ModuleFactory = async (ctx) => {
  const maintenance = getMaintenance(ctx);
  await maintenance.ready();
  const sweep = new AgentIncidentSweep(ctx);
  registerIncidentMetrics(ctx);
  return {
    name: 'incidents',
    handlers: { ...incidentHandlers, ...maintenanceHandlers },
    start() {
      maintenance.start();
      sweep.start();
    },
    async stop() {
      maintenance.stop();
      await sweep.stop();
    },
  };
};
