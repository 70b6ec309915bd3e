import type { OperationDef } from './operation.ts';
import { alertRuleOperations } from './ops/alert-rules.ts';
import { authOperations } from './ops/auth.ts';
import { certificateOperations } from './ops/certificates.ts';
import { incidentOperations } from './ops/incidents.ts';
import { monitoringOperations } from './ops/monitoring.ts';
import { notifierOperations } from './ops/notifiers.ts';
import { pingKeyOperations } from './ops/ping-keys.ts';
import { pingOperations } from './ops/pings.ts';
import { statusIncidentOperations } from './ops/status-incidents.ts';
import { statusPageOperations } from './ops/status-pages.ts';
import { statusSubscriberOperations } from './ops/status-subscribers.ts';
import { systemOperations } from './ops/system.ts';
import { testClockOperations } from './ops/test-clock.ts';
import { tunnelOperations } from './ops/tunnel.ts';
import { ssoOperations } from './ops/sso.ts';
import { twoFactorOperations } from './ops/two-factor.ts';

/**
 * Every operation of the API, by id. Each capability adds its own table in
 * src/api/ops/ and spreads it here; the daemon refuses to start if an
 * operation has no handler, so the table and the server cannot drift.
 */
export const operations = {
  ...systemOperations,
  ...authOperations,
  ...monitoringOperations,
  ...tunnelOperations,
  ...notifierOperations,
  ...alertRuleOperations,
  ...incidentOperations,
  ...statusPageOperations,
  ...statusIncidentOperations,
  ...statusSubscriberOperations,
  ...certificateOperations,
  ...pingOperations,
  ...testClockOperations,
  ...pingKeyOperations,
  ...ssoOperations,
  ...twoFactorOperations,
} as const;

export type Operations = typeof operations;
export type OperationId = keyof Operations;

export const operationList: readonly OperationDef[] = Object.values(operations);
