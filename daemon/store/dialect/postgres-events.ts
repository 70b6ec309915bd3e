import { type Kysely, sql } from 'kysely';
import type { Database } from '../schema.ts';

export const EVENTS_CHANNEL = 'monctl_events';

/**
 * Numbers a run of events of one channel and announces them to every pod,
 * in one statement: the upsert takes the channel's row lock until commit, so
 * two pods' runs commit, and so arrive (NOTIFY delivers in commit order), in
 * the order of their numbers. `events` is the JSON of [kind, data] pairs,
 * under the NOTIFY payload limit; a larger one (`spill`) is stored in
 * event_spill and the notification carries its id.
 */
export async function announceEvents(
  db: Kysely<Database>,
  channel: string,
  count: number,
  events: string,
  origin: string,
  spill: boolean,
): Promise<void> {
  const numbered = sql`INSERT INTO event_channels (name, seq) VALUES (${channel}, ${count})
    ON CONFLICT (name) DO UPDATE SET seq = event_channels.seq + excluded.seq RETURNING seq`;
  if (!spill) {
    await sql`WITH s AS (${numbered})
      SELECT pg_notify(${EVENTS_CHANNEL}, json_build_object('c', ${channel}::text, 's', s.seq - ${count} + 1, 'o', ${origin}::text, 'e', ${events}::json)::text) FROM s`.execute(
      db,
    );
    return;
  }
  await sql`WITH x AS (INSERT INTO event_spill (body, created_at) VALUES (${events}, (extract(epoch from clock_timestamp()) * 1000)::bigint) RETURNING id),
    s AS (${numbered})
    SELECT pg_notify(${EVENTS_CHANNEL}, json_build_object('c', ${channel}::text, 's', s.seq - ${count} + 1, 'o', ${origin}::text, 'x', x.id, 'n', ${count}::int)::text) FROM s, x`.execute(
    db,
  );
}

/**
 * Announces that events of the channel were lost (shed, or an announcement
 * failed): the marker takes the next number, in order with the events, and
 * every pod restarts the channel at it (its streams end and reconnect for a SNAPSHOT).
 */
export async function announceRestart(db: Kysely<Database>, channel: string, origin: string): Promise<void> {
  await sql`WITH s AS (INSERT INTO event_channels (name, seq) VALUES (${channel}, 1)
      ON CONFLICT (name) DO UPDATE SET seq = event_channels.seq + 1 RETURNING seq)
    SELECT pg_notify(${EVENTS_CHANNEL}, json_build_object('c', ${channel}::text, 's', s.seq, 'o', ${origin}::text, 'r', true)::text) FROM s`.execute(
    db,
  );
}

/** The events of a spilled notification. */
export async function spilledEvents(db: Kysely<Database>, id: number): Promise<string | undefined> {
  return (await db.selectFrom('event_spill').select('body').where('id', '=', id).executeTakeFirst())?.body;
}

/** Spilled events older than `ms` are gone (every pod had them long before). */
export async function forgetSpilled(db: Kysely<Database>, ms: number): Promise<void> {
  await db
    .deleteFrom('event_spill')
    .where('created_at', '<', sql<number>`(extract(epoch from clock_timestamp()) * 1000)::bigint - ${ms}`)
    .execute();
}

/**
 * The last number of every channel, creating the rows of `names` first. A
 * channel's numbers start from the clock in milliseconds, as on one daemon:
 * ids from an older database are always below them, and get a SNAPSHOT.
 */
export async function channelSeqs(db: Kysely<Database>, names: Iterable<string> = []): Promise<Map<string, number>> {
  const fresh = [...names].map((name) => ({ name, seq: Date.now() }));
  if (fresh.length > 0)
    await db
      .insertInto('event_channels')
      .values(fresh)
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
  const rows = await db.selectFrom('event_channels').select(['name', 'seq']).execute();
  return new Map(rows.map((r) => [r.name, Number(r.seq)]));
}
