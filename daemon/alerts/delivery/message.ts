import type { Kysely } from 'kysely';
import type { Database } from '../../store/schema.ts';
import type { Severity } from '../../../src/notifier-fields.ts';
import type { AlertEventPayload, AlertItem, OutgoingMessage } from '../types.ts';
import { addDependents } from './dependents.ts';

/** The message of a notification, rebuilt from its items on every attempt (same id, same alerts). */
export async function loadMessage(db: Kysely<Database>, notification: { id: number; message_id: string }): Promise<OutgoingMessage> {
  const rows = await db
    .selectFrom('notification_items as i')
    .innerJoin('alert_events as e', 'e.id', 'i.event_id')
    .select(['e.id', 'e.payload', 'e.created_at', 'i.reminder', 'i.severity'])
    .where('i.notification_id', '=', notification.id)
    .orderBy('e.id')
    .execute();
  const items: AlertItem[] = rows.map((row) => {
    const payload = JSON.parse(row.payload) as AlertEventPayload;
    return {
      ...payload,
      eventId: row.id,
      at: row.created_at,
      reminder: row.reminder === 1,
      severity: (row.severity as Severity | null) ?? payload.severity ?? 'critical',
    };
  });
  await addDependents(db, items);
  return { id: notification.message_id, items, test: false };
}
