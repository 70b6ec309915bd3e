import { INCIDENT_OPENED, INCIDENT_RESOLVED } from '../../../src/api/schemas/incidents.ts';
import { MONITORING_CHANNEL } from '../../../src/api/schemas/monitoring.ts';
import type { DaemonContext } from '../../context.ts';
import { type IncidentRow, toIncident } from './mappers.ts';

/** An incident that opened or resolved in a transaction, to announce once it commits. */
export interface IncidentChange {
  kind: 'opened' | 'resolved';
  row: IncidentRow;
}

/**
 * After commit: `INCIDENT_OPENED` and `INCIDENT_RESOLVED` on the monitoring
 * channel of `/api/events`. The stream's filter reads `resourceId`, so callers
 * see the incidents of the resources they may see, as with STATUS_CHANGED;
 * agent incidents (no resourceId) reach ADMIN only. Each change wrote its
 * alert event in the same transaction: `alerts.enqueued` wakes the router.
 */
export function publishIncidents(ctx: Pick<DaemonContext, 'events' | 'bus'>, changes: readonly IncidentChange[]): void {
  if (changes.length === 0) return;
  ctx.bus.emit('alerts.enqueued');
  const channel = ctx.events.channel(MONITORING_CHANNEL);
  const now = Date.now();
  for (const { kind, row } of changes) channel.publish(kind === 'opened' ? INCIDENT_OPENED : INCIDENT_RESOLVED, toIncident(row, now));
}
