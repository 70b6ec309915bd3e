import type { Kysely } from 'kysely';
import type { Database } from '../../store/schema.ts';
import { shapedChunks } from '../../store/batches.ts';

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

/**
 * For incidents, the notifiers that were sent (or are about to be sent) the
 * event that opened them: a resolution or a reminder goes only where the
 * opening went, so an incident silenced by maintenance or inhibition stays
 * silent to its end.
 */
export async function openingNotifiers(
  db: Kysely<Database>,
  incidentIds: number[],
): Promise<Map<number, { eventId: number; notifiers: Set<number> }>> {
  const result = new Map<number, { eventId: number; notifiers: Set<number> }>();
  for (const part of chunked([...new Set(incidentIds)])) {
    const rows = await db
      .selectFrom('alert_events as e')
      .leftJoin('notification_items as i', 'i.event_id', 'e.id')
      .leftJoin('notifications as n', 'n.id', 'i.notification_id')
      .select(['e.id as event_id', 'e.incident_id', 'n.notifier_id'])
      .where('e.incident_id', 'in', part)
      .where('e.kind', 'in', ['INCIDENT_OPENED', 'AGENT_DOWN'])
      .where('e.suppressed', 'is', null)
      .where('e.routed_at', 'is not', null)
      .execute();
    for (const row of rows) {
      const entry = result.get(row.incident_id!) ?? { eventId: row.event_id, notifiers: new Set<number>() };
      if (row.notifier_id !== null) entry.notifiers.add(row.notifier_id);
      result.set(row.incident_id!, entry);
    }
  }
  return result;
}
