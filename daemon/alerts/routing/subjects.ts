import type { Kysely } from 'kysely';
import type { Database } from '../../store/schema.ts';
import { shapedChunks } from '../../store/batches.ts';
import type { Severity } from '../../../src/notifier-fields.ts';
import { severityOf } from '../alert-events.ts';
import type { AlertEventPayload } from '../types.ts';

const chunked = <T>(items: T[]) => shapedChunks(items, 256);

/** Each resource's groups, read in chunks. */
export async function groupsOf(db: Kysely<Database>, resourceIds: number[]): Promise<Map<number, number[]>> {
  const groups = new Map<number, number[]>();
  for (const part of chunked([...new Set(resourceIds)])) {
    const rows = await db.selectFrom('resource_groups').select(['resource_id', 'group_id']).where('resource_id', 'in', part).execute();
    for (const row of rows) groups.set(row.resource_id, [...(groups.get(row.resource_id) ?? []), row.group_id]);
  }
  return groups;
}

/** An incident's opening event as routed: where it went, and with which severity. */
export interface Opening {
  eventId: number;
  /** The opening's own severity (its payload's): a resolution and the reminders have it too. */
  severity: Severity;
  /** Each notifier sent the opening, with the severity it received (a rule's override, else the opening's). */
  notifiers: Map<number, Severity>;
}

/**
 * For incidents, the notifiers that were sent (or are about to be sent) the
 * event that opened them: a resolution or a reminder goes only where the
 * opening went, so an incident silenced by maintenance or inhibition stays
 * silent to its end.
 */
export async function openingNotifiers(db: Kysely<Database>, incidentIds: number[]): Promise<Map<number, Opening>> {
  const result = new Map<number, Opening>();
  for (const part of chunked([...new Set(incidentIds)])) {
    const rows = await db
      .selectFrom('alert_events as e')
      // Reminders carry their own rule's severity: the opening's items say what each notifier was first sent.
      .leftJoin('notification_items as i', (j) => j.onRef('i.event_id', '=', 'e.id').on('i.reminder', '=', 0))
      .leftJoin('notifications as n', 'n.id', 'i.notification_id')
      .select(['e.id as event_id', 'e.incident_id', 'e.payload', 'n.notifier_id', 'i.severity'])
      .where('e.incident_id', 'in', part)
      .where('e.kind', 'in', ['INCIDENT_OPENED', 'AGENT_DOWN'])
      .where('e.suppressed', 'is', null)
      .where('e.routed_at', 'is not', null)
      .execute();
    for (const row of rows) {
      const entry = result.get(row.incident_id!) ?? {
        eventId: row.event_id,
        severity: severityOf((JSON.parse(row.payload) as AlertEventPayload).severity),
        notifiers: new Map<number, Severity>(),
      };
      // Items routed before severities were frozen have none: the opening's.
      if (row.notifier_id !== null) entry.notifiers.set(row.notifier_id, row.severity === null ? entry.severity : severityOf(row.severity));
      result.set(row.incident_id!, entry);
    }
  }
  return result;
}
