import type { Transaction } from 'kysely';
import type { Database } from '../../store/schema.ts';
import type { IncidentChange } from './events.ts';
import { resolveIncident } from './store.ts';

/**
 * A resource stops being watched: deleted, or deactivated. Its open incident
 * resolves with the reason as the event's `suppressed` ('deleted',
 * 'deactivated'), so receivers get no "recovered" message for a resource that
 * did not recover, and the streaks start again from zero. Call it in the
 * transaction that deletes or deactivates, before the row is deleted.
 */
export async function stopWatching(
  trx: Transaction<Database>,
  resourceId: number,
  reason: 'deleted' | 'deactivated',
  at = Date.now(),
): Promise<IncidentChange[]> {
  const row = await trx
    .selectFrom('resources')
    .select(['id', 'name', 'target', 'open_incident_id'])
    .where('id', '=', resourceId)
    .executeTakeFirst();
  if (!row) return [];
  const changes: IncidentChange[] = [];
  if (row.open_incident_id !== null) {
    const subject = { type: 'resource' as const, id: Number(row.id), name: row.name, target: row.target };
    const resolved = await resolveIncident(trx, Number(row.open_incident_id), subject, { at, reason });
    if (resolved) changes.push({ kind: 'resolved', row: resolved });
  }
  if (reason === 'deactivated') {
    await trx
      .updateTable('resources')
      .set({
        fail_streak: 0,
        ok_streak: 0,
        fail_since: null,
        fail_message: null,
        fail_error_code: null,
        open_incident_id: null,
      })
      .where('id', '=', resourceId)
      .execute();
  }
  return changes;
}
