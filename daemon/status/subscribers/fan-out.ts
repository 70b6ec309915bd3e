import { randomBytes, randomUUID } from 'node:crypto';
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database, SubscriberMessagesTable } from '../../store/schema.ts';

/** Messages claimed per pass: one pass's transaction stays short whatever the backlog. */
export const FAN_OUT_BATCH = 20;
/** Deliveries per INSERT (6 values each: far under SQLite's 32,766 parameters). */
const INSERT_CHUNK = 500;

type Message = Selectable<SubscriberMessagesTable>;
type Db = Kysely<Database> | Transaction<Database>;

/** What a message is about: the resources and groups it touches; both empty: the whole page. */
interface Affected {
  resources: Set<number>;
  groups: Set<number>;
}

/**
 * Moves outbox messages into deliveries, one per recipient. A pass claims a
 * batch by stamping `fanned_by` with its own token where `fanned_at IS NULL`,
 * reads back what it got and writes the deliveries in the same transaction,
 * as the alert router claims alert events: two pods on one database each
 * fan a message out once, and a crash rolls the claim back with the writes.
 * The unique (message, subscriber) pair is a second guard.
 * Returns how many messages it claimed and deliveries it wrote.
 */
export async function fanOutOnce(db: Kysely<Database>, pod: string, now = Date.now()): Promise<{ messages: number; deliveries: number }> {
  const candidates = await db
    .selectFrom('subscriber_messages')
    .select('id')
    .where('fanned_at', 'is', null)
    .orderBy('id')
    .limit(FAN_OUT_BATCH)
    .execute();
  if (candidates.length === 0) return { messages: 0, deliveries: 0 };
  const token = `${pod}:${randomUUID()}`;
  return db.transaction().execute(async (trx) => {
    await trx
      .updateTable('subscriber_messages')
      .set({ fanned_at: now, fanned_by: token })
      .where(
        'id',
        'in',
        candidates.map((c) => c.id),
      )
      .where('fanned_at', 'is', null)
      .execute();
    const mine = await trx.selectFrom('subscriber_messages').selectAll().where('fanned_by', '=', token).orderBy('id').execute();
    let written = 0;
    for (const message of mine) {
      const recipients = await recipientsOf(trx, message);
      for (let i = 0; i < recipients.length; i += INSERT_CHUNK) {
        const rows = recipients.slice(i, i + INSERT_CHUNK).map((subscriberId) => ({
          message_id: message.id,
          subscriber_id: subscriberId,
          // The Message-ID and webhook-id of every attempt: a receiver drops a repeat by it.
          delivery_key: `msg_${randomBytes(16).toString('base64url')}`,
          state: 'pending' as const,
          created_at: now,
          next_attempt_at: now,
        }));
        await trx
          .insertInto('subscriber_deliveries')
          .values(rows)
          .onConflict((oc) => oc.columns(['message_id', 'subscriber_id']).doNothing())
          .execute();
        written += rows.length;
      }
    }
    return { messages: mine.length, deliveries: written };
  });
}

/**
 * Who gets a message. CONFIRM: its own subscriber, while still pending (a
 * click that came first leaves nothing to confirm). INCIDENT_UPDATE and
 * MAINTENANCE: the page's confirmed subscribers (confirmed when the message
 * was written: a reader who signs up later does not get the backlog) whose
 * picks match, or who picked nothing.
 */
async function recipientsOf(db: Db, m: Message): Promise<number[]> {
  if (m.kind === 'CONFIRM') {
    const row = await db
      .selectFrom('status_subscribers')
      .select('id')
      .where('id', '=', m.subscriber_id ?? 0)
      .where('page_id', '=', m.page_id)
      .where('kind', '=', 'EMAIL')
      .where('confirmed_at', 'is', null)
      .executeTakeFirst();
    return row ? [row.id] : [];
  }
  const affected = m.kind === 'INCIDENT_UPDATE' ? await incidentAffects(db, m.incident_id) : await maintenanceAffects(db, m);
  if (!affected) return [];
  const subscribers = await db
    .selectFrom('status_subscribers')
    .select(['id', 'resource_ids', 'group_ids'])
    .where('page_id', '=', m.page_id)
    .where('confirmed_at', 'is not', null)
    .where('confirmed_at', '<=', m.created_at)
    .orderBy('id')
    .execute();
  return subscribers.filter((s) => matches(ids(s.resource_ids), ids(s.group_ids), affected)).map((s) => s.id);
}

/**
 * A reader who picked nothing gets everything; one who picked resources or groups gets what
 * touches one of them. A message that names no resource is about the whole page: everyone gets it.
 */
export function matches(resourcePicks: number[], groupPicks: number[], affected: Affected): boolean {
  if (resourcePicks.length === 0 && groupPicks.length === 0) return true;
  if (affected.resources.size === 0 && affected.groups.size === 0) return true;
  return resourcePicks.some((id) => affected.resources.has(id)) || groupPicks.some((id) => affected.groups.has(id));
}

/** The incident's resources and their groups; undefined when the incident is gone. */
async function incidentAffects(db: Db, incidentId: number | null): Promise<Affected | undefined> {
  if (incidentId === null) return undefined;
  const rows = await db.selectFrom('status_incident_resources').select('resource_id').where('incident_id', '=', incidentId).execute();
  return withGroups(
    db,
    rows.map((r) => r.resource_id),
    [],
  );
}

/** The resources and groups of the notice's maintenance window; none known: the whole page. */
async function maintenanceAffects(db: Db, m: Message): Promise<Affected | undefined> {
  const noticeId = noticeIdOf(JSON.parse(m.payload));
  if (!Number.isSafeInteger(noticeId)) return { resources: new Set(), groups: new Set() };
  const window = await db
    .selectFrom('status_maintenance_notices as n')
    .innerJoin('maintenance_windows as w', 'w.id', 'n.window_id')
    .select(['w.resource_ids', 'w.group_ids'])
    .where('n.id', '=', noticeId)
    .executeTakeFirst();
  // The notice was deleted before it went out: nothing to say.
  if (!window) return undefined;
  return withGroups(db, ids(window.resource_ids), ids(window.group_ids));
}

async function withGroups(db: Db, resources: number[], groups: number[]): Promise<Affected> {
  const memberOf =
    resources.length === 0 ? [] : await db.selectFrom('resource_groups').select('group_id').where('resource_id', 'in', resources).execute();
  return { resources: new Set(resources), groups: new Set([...groups, ...memberOf.map((g) => g.group_id)]) };
}

/** A JSON array of ids as stored; anything else reads as none. */
function ids(json: string): number[] {
  try {
    const v = JSON.parse(json) as unknown;
    return Array.isArray(v) ? v.filter((x): x is number => Number.isSafeInteger(x)) : [];
  } catch {
    return [];
  }
}

/** The notice a MAINTENANCE message is about: `payload.notice.id` (as the notices API writes it) or `payload.noticeId`. */
export function noticeIdOf(payload: unknown): number {
  const p = (payload ?? {}) as { noticeId?: unknown; notice?: { id?: unknown } };
  return Number(p.notice?.id ?? p.noticeId);
}
