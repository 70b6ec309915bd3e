import { randomUUID } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { Severity } from '../../../src/notifier-fields.ts';
import type { Database } from '../../store/schema.ts';

/**
 * Adds an alert event to the notifier's message that is still collecting
 * (created less than its group wait ago, never claimed), or opens a new one
 * that leaves when its group wait is over. The conditional update on the open
 * message locks it: a dispatcher claiming it at the same moment either sees
 * the new item or makes us open a new message, never loses it. The item keeps
 * the severity the notifier receives (a rule's override, else the alert's),
 * frozen here: a rule changed later does not rewrite what was routed.
 */
export async function addToNotification(
  trx: Transaction<Database>,
  item: { notifierId: number; eventId: number; groupWaitSeconds: number; reminder: boolean; severity: Severity; now: number },
  open: Map<number, number>,
): Promise<void> {
  const { notifierId, eventId, now } = item;
  let id =
    open.get(notifierId) ??
    (
      await trx
        .selectFrom('notifications')
        .select('id')
        .where('notifier_id', '=', notifierId)
        .where('state', '=', 'pending')
        .where('attempts', '=', 0)
        .where('claimed_by', 'is', null)
        .where('send_after', '>', now)
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirst()
    )?.id;
  if (id !== undefined) {
    const held = await trx
      .updateTable('notifications')
      .set({ created_at: (eb) => eb.ref('created_at') })
      .where('id', '=', id)
      .where('claimed_by', 'is', null)
      .where('attempts', '=', 0)
      .where('send_after', '>', now)
      .executeTakeFirst();
    if (Number(held.numUpdatedRows) !== 1) id = undefined;
  }
  if (id === undefined) {
    const sendAfter = now + item.groupWaitSeconds * 1000;
    id = (
      await trx
        .insertInto('notifications')
        .values({
          notifier_id: notifierId,
          message_id: `msg_${randomUUID().replaceAll('-', '')}`,
          state: 'pending',
          created_at: now,
          send_after: sendAfter,
          next_attempt_at: sendAfter,
          claimed_by: null,
          claimed_until: null,
          sent_at: null,
          last_error: null,
        })
        .returning('id')
        .executeTakeFirstOrThrow()
    ).id;
  }
  open.set(notifierId, id);
  await trx
    .insertInto('notification_items')
    .values({ notification_id: id, event_id: eventId, reminder: item.reminder ? 1 : 0, severity: item.severity })
    .onConflict((oc) => oc.doNothing())
    .execute();
}
