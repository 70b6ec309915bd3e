import type { Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';
import { SEVERITIES, type Severity } from '../../src/notifier-fields.ts';
import type { AlertEventPayload } from './types.ts';

/**
 * A stored severity as routing reads it: a resource's column, a payload's field. Absent or
 * unknown (agents, the edge's certificates, events written before resources had one): critical.
 */
export function severityOf(value: unknown): Severity {
  return (SEVERITIES as readonly unknown[]).includes(value) ? (value as Severity) : 'critical';
}

/**
 * Writes one alert event into the outbox. Call it inside the transaction that
 * makes the change it announces (an incident opening, an agent going down),
 * so that the change and its alert commit together or not at all. The router
 * picks it up later; `suppressed` records why nothing will be sent for it
 * (for example `maintenance`).
 */
export async function enqueueAlertEvent(
  trx: Transaction<Database>,
  payload: AlertEventPayload,
  options: { suppressed?: string | null; at?: number } = {},
): Promise<number> {
  const row = await trx
    .insertInto('alert_events')
    .values({
      kind: payload.kind,
      subject_type: payload.subject.type,
      resource_id: payload.subject.type === 'resource' ? payload.subject.id : null,
      agent_id: payload.subject.type === 'agent' ? payload.subject.id : null,
      incident_id: payload.incidentId,
      payload: JSON.stringify(payload),
      suppressed: options.suppressed ?? null,
      created_at: options.at ?? Date.now(),
      routed_at: null,
      routed_by: null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}
