import type { Transaction } from 'kysely';
import type { Database, PostedState } from '../../store/schema.ts';
import type { PageRow } from '../live-state.ts';
import { enqueueSubscriberMessage } from '../subscribers/outbox.ts';
import { readPostedIncident } from './read.ts';

export interface Entry {
  state: PostedState;
  message: string;
  messageHtml: string;
  automatic?: boolean;
  at: number;
}

/** Appends an entry to the incident's timeline; returns its id. */
export async function insertEntry(trx: Transaction<Database>, incidentId: number, e: Entry): Promise<number> {
  const row = await trx
    .insertInto('status_incident_updates')
    .values({
      incident_id: incidentId,
      state: e.state,
      message: e.message,
      message_html: e.messageHtml,
      automatic: e.automatic ? 1 : 0,
      created_at: e.at,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

/**
 * Writes the INCIDENT_UPDATE outbox row for one entry, in the transaction that
 * posted it: readers hear of an update exactly when it exists. The payload freezes
 * what the mail and the webhook say (the incident as it stands after the update,
 * its resources for the subscribers' picks, and the update), so a later edit or
 * deletion does not change a message already on its way.
 */
export async function announceEntry(trx: Transaction<Database>, page: PageRow, incidentId: number, updateId: number, now: number) {
  const { updates, ...incident } = await readPostedIncident(trx, page.id, incidentId);
  const update = updates.find((u) => u.id === updateId);
  await enqueueSubscriberMessage(
    trx,
    {
      kind: 'INCIDENT_UPDATE',
      pageId: page.id,
      incidentId,
      updateId,
      payload: { page: { id: page.id, slug: page.slug, title: page.title }, incident, update },
    },
    now,
  );
}
