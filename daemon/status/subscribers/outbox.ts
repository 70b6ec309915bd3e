import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../store/schema.ts';

/** What goes into the subscribers' outbox (`subscriber_messages`). */
export type SubscriberMessage =
  /** The double opt-in mail, to one pending EMAIL subscriber. */
  | { kind: 'CONFIRM'; pageId: number; subscriberId: number; payload?: Record<string, unknown> }
  /** A posted incident's new update (its opening and its resolution included), to every matching confirmed subscriber. */
  | { kind: 'INCIDENT_UPDATE'; pageId: number; incidentId: number; updateId: number; payload?: Record<string, unknown> }
  /** A maintenance notice shown on the page, when it is posted. */
  | { kind: 'MAINTENANCE'; pageId: number; payload?: Record<string, unknown> };

/**
 * Writes a message to the subscribers' outbox. Call it inside the transaction
 * that makes the change (posting the update, signing the reader up), so the
 * message exists exactly when the change does; the fan-out and the deliveries
 * (daemon/status/subscribers/dispatch) take it from there on any pod. The
 * caller wakes the fan-out after the commit with `ctx.bus.emit('status.subscribers.enqueued')`.
 */
export async function enqueueSubscriberMessage(
  db: Kysely<Database> | Transaction<Database>,
  m: SubscriberMessage,
  now: number,
): Promise<number> {
  const row = await db
    .insertInto('subscriber_messages')
    .values({
      page_id: m.pageId,
      kind: m.kind,
      subscriber_id: m.kind === 'CONFIRM' ? m.subscriberId : null,
      incident_id: m.kind === 'INCIDENT_UPDATE' ? m.incidentId : null,
      update_id: m.kind === 'INCIDENT_UPDATE' ? m.updateId : null,
      payload: JSON.stringify(m.payload ?? {}),
      created_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}
