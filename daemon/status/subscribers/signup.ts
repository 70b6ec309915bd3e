import type { Kysely } from 'kysely';
import type { Database } from '../../store/schema.ts';
import { enqueueSubscriberMessage } from './outbox.ts';
import { newNonce, type SubscriberTokens, type TokenPurpose } from './tokens.ts';

/** A pending address gets its confirmation mail again at most this often, however often it is signed up. */
export const RESEND_AFTER_MS = 3_600_000;

export interface SignUp {
  pageId: number;
  address: string;
  key: string;
  resourceIds: number[];
  groupIds: number[];
  /** The client as the rate limits count it (IPv4, or an IPv6 /64). */
  client: string;
}

/**
 * Signs an email address up for a page, in one transaction: a new address
 * becomes a pending subscriber with a CONFIRM message in the outbox; a pending
 * one gets a CONFIRM again only when its last went out over an hour ago (the
 * conditional update on `confirm_sent_at` makes that hold across pods); a
 * confirmed one is left exactly as it is (a stranger cannot change its picks).
 * The caller answers the same whatever happened, so the answer tells nobody
 * whether the address is subscribed. Returns whether a message was enqueued.
 */
export async function signUp(db: Kysely<Database>, s: SignUp, now: number): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const inserted = await trx
      .insertInto('status_subscribers')
      .values({
        page_id: s.pageId,
        kind: 'EMAIL',
        address: s.address,
        address_key: s.key,
        resource_ids: JSON.stringify(s.resourceIds),
        group_ids: JSON.stringify(s.groupIds),
        token_nonce: newNonce(),
        created_at: now,
        confirm_sent_at: now,
        created_ip: s.client.slice(0, 64),
      })
      .onConflict((oc) => oc.columns(['page_id', 'kind', 'address_key']).doNothing())
      .returning('id')
      .executeTakeFirst();
    if (inserted) {
      await enqueueSubscriberMessage(trx, { kind: 'CONFIRM', pageId: s.pageId, subscriberId: Number(inserted.id) }, now);
      return true;
    }
    const row = await trx
      .selectFrom('status_subscribers')
      .select(['id', 'confirmed_at', 'confirm_sent_at'])
      .where('page_id', '=', s.pageId)
      .where('kind', '=', 'EMAIL')
      .where('address_key', '=', s.key)
      .executeTakeFirst();
    if (!row || row.confirmed_at !== null) return false;
    if (row.confirm_sent_at !== null && now - row.confirm_sent_at < RESEND_AFTER_MS) return false;
    // Claimed on the value read: of two pods re-sending at once, one updates the row and enqueues.
    const claimed = await trx
      .updateTable('status_subscribers')
      .set({ confirm_sent_at: now, resource_ids: JSON.stringify(s.resourceIds), group_ids: JSON.stringify(s.groupIds) })
      .where('id', '=', row.id)
      .where('confirmed_at', 'is', null)
      .where('confirm_sent_at', row.confirm_sent_at === null ? 'is' : '=', row.confirm_sent_at)
      .executeTakeFirst();
    if (Number(claimed.numUpdatedRows) !== 1) return false;
    await enqueueSubscriberMessage(trx, { kind: 'CONFIRM', pageId: s.pageId, subscriberId: Number(row.id) }, now);
    return true;
  });
}

type Found = { id: number; page_id: number; kind: 'EMAIL' | 'WEBHOOK'; token_nonce: string; confirmed_at: number | null };

/** The subscriber a link names, on this page, when the link is its link for `purpose`; else undefined. */
export async function subscriberOfToken(
  db: Kysely<Database>,
  tokens: SubscriberTokens,
  purpose: TokenPurpose,
  pageId: number,
  token: string,
): Promise<Found | undefined> {
  const id = tokens.idOf(token);
  if (id === undefined) return undefined;
  const row = await db
    .selectFrom('status_subscribers')
    .select(['id', 'page_id', 'kind', 'token_nonce', 'confirmed_at'])
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row || row.page_id !== pageId || !tokens.verify(purpose, row, token)) return undefined;
  return row;
}

/** The owner clicked the confirmation link: the subscription starts (once; a second click changes nothing). */
export async function confirmSubscriber(db: Kysely<Database>, id: number, now: number): Promise<void> {
  await db.updateTable('status_subscribers').set({ confirmed_at: now }).where('id', '=', id).where('confirmed_at', 'is', null).execute();
}

/**
 * The row goes, address and all: an unsubscribed reader leaves nothing behind.
 * Its messages go first, then the row, in the order the fan-out takes its locks
 * (a message, then the subscriber its new delivery points at): deleting the row
 * alone locks the subscriber first and cascades to the messages, which on
 * PostgreSQL deadlocks with a fan-out pass claiming that subscriber's CONFIRM.
 */
export async function removeSubscriber(db: Kysely<Database>, id: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('subscriber_messages').where('subscriber_id', '=', id).execute();
    await trx.deleteFrom('status_subscribers').where('id', '=', id).execute();
  });
}
