import { alertsModule } from './alerts/index.ts';
import { notifiersModule } from './alerts/notifiers/module.ts';
import { incidentsModule } from './alerts/incidents/module.ts';
import { backupModule } from './backup/index.ts';
import { authModule } from './auth/index.ts';
import { certsModule } from './certs/index.ts';
import type { ModuleFactory } from './module.ts';
import { monitoringModule } from './monitoring/index.ts';
import { probesModule } from './probes/index.ts';
import { pushModule } from './push/index.ts';
import { statusModule } from './status/index.ts';
import { systemModule } from './system/index.ts';
import { tunnelAdminModule } from './tunnel-admin/index.ts';
import { tunnelModule } from './tunnel/index.ts';

/**
 * The daemon's capabilities, in start order. A new capability adds its
 * factory here; its operations live in src/api/ops/ and its code in its folder.
 */
export const moduleFactories: ModuleFactory[] = [
  systemModule,
  authModule,
  monitoringModule,
  probesModule, // after monitoring: it stops first, so no result is written after monitoring stops
  pushModule, // after monitoring, like probes: its pings and missed deadlines are results
  tunnelAdminModule, // before tunnel: the pod exists before agents connect, and stops after it
  tunnelModule,
  notifiersModule,
  alertsModule, // stops before the notifiers' HTTP pool (a service, daemon/services.ts) closes, so no send is in flight
  statusModule, // after monitoring: it follows the monitoring channel and the bus
  certsModule, // after tunnel and status: ACME reads their hostnames
  incidentsModule, // its sweep stops before the tunnel marks agents disconnected on drain
  backupModule, // last: it stops first, so a backup in progress is aborted before anything closes
];
