import { subscriberBox } from '../../daemon/status/subscribers/secret.ts';
import { newNonce, SubscriberTokens } from '../../daemon/status/subscribers/tokens.ts';
import { eventually } from '../alerts/world.ts';
import type { TestDaemon } from '../helpers/daemon.ts';
import { bearer } from '../helpers/http.ts';
import { type DbHandle, openDb } from '../helpers/test-database.ts';

/**
 * Subscribers, posted incidents and the outbox written straight into a running daemon's
 * database, as the sign-up and the incident API write them (each update and its outbox row in
 * one transaction), for the delivery tests.
 */
export class SubscriberFixtures {
  readonly db: DbHandle;
  readonly tokens: SubscriberTokens;
  readonly #secret: Uint8Array;

  private constructor(db: DbHandle, secret: Uint8Array) {
    this.db = db;
    this.#secret = secret;
    this.tokens = new SubscriberTokens(secret);
  }

  static async open(d: { dataDir: string; databaseUrl?: string }): Promise<SubscriberFixtures> {
    const db = await openDb(d);
    const [row] = await db.query<{ value: string }>("SELECT value FROM settings WHERE key = 'install_secret'");
    return new SubscriberFixtures(db, Buffer.from(row.value, 'base64'));
  }

  async #insert(sql: string, ...params: unknown[]): Promise<number> {
    const [row] = await this.db.query<{ id: number }>(`${sql} RETURNING id`, ...params);
    return Number(row.id);
  }

  /** An EMAIL subscriber, confirmed a second ago unless `pending`; with a CONFIRM outbox row when pending. */
  async email(pageId: number, address: string, o: { pending?: boolean; resourceIds?: number[]; groupIds?: number[] } = {}) {
    const now = Date.now();
    const nonce = newNonce();
    return this.db.transaction(async () => {
      const id = await this.#insert(
        `INSERT INTO status_subscribers (page_id, kind, address, address_key, resource_ids, group_ids, token_nonce, created_at, confirmed_at, confirm_sent_at)
         VALUES (?, 'EMAIL', ?, ?, ?, ?, ?, ?, ?, ?)`,
        pageId,
        address,
        address.toLowerCase(),
        JSON.stringify(o.resourceIds ?? []),
        JSON.stringify(o.groupIds ?? []),
        nonce,
        now - 1000,
        o.pending ? null : now - 1000,
        o.pending ? now : null,
      );
      if (o.pending) await this.#outbox(pageId, 'CONFIRM', { subscriberId: id });
      return { id, token_nonce: nonce };
    });
  }

  /** A WEBHOOK subscriber (confirmed when made) with its own signing secret. */
  async webhook(pageId: number, url: string, secret: string, o: { resourceIds?: number[]; groupIds?: number[] } = {}) {
    const now = Date.now() - 1000;
    const id = await this.#insert(
      `INSERT INTO status_subscribers (page_id, kind, address, address_key, resource_ids, group_ids, token_nonce, secret_enc, created_at, confirmed_at)
       VALUES (?, 'WEBHOOK', ?, ?, ?, ?, ?, ?, ?, ?)`,
      pageId,
      url,
      url,
      JSON.stringify(o.resourceIds ?? []),
      JSON.stringify(o.groupIds ?? []),
      newNonce(),
      subscriberBox(this.#secret).seal(secret),
      now,
      now,
    );
    return { id };
  }

  /** A posted incident affecting `resources` (no update yet). */
  async incident(pageId: number, title: string, resources: number[], impact = 'major'): Promise<number> {
    const now = Date.now();
    return this.db.transaction(async () => {
      const id = await this.#insert(
        'INSERT INTO status_incidents (page_id, title, impact, state, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)',
        pageId,
        title,
        impact,
        'investigating',
        now,
        now,
      );
      for (const r of resources) {
        await this.db.query('INSERT INTO status_incident_resources (incident_id, resource_id, impact) VALUES (?, ?, ?)', id, r, impact);
      }
      return id;
    });
  }

  /** An update of the incident and its INCIDENT_UPDATE outbox row, in one transaction. */
  async update(pageId: number, incidentId: number, state: string, message: string, messageHtml = `<p>${message}</p>`) {
    const now = Date.now();
    return this.db.transaction(async () => {
      const updateId = await this.#insert(
        'INSERT INTO status_incident_updates (incident_id, state, message, message_html, created_at) VALUES (?, ?, ?, ?, ?)',
        incidentId,
        state,
        message,
        messageHtml,
        now,
      );
      await this.db.query(
        'UPDATE status_incidents SET state = ?, updated_at = ?, resolved_at = ? WHERE id = ?',
        state,
        now,
        state === 'resolved' ? now : null,
        incidentId,
      );
      const [incident] = await this.db.query<{ title: string; impact: string; state: string }>(
        'SELECT title, impact, state FROM status_incidents WHERE id = ?',
        incidentId,
      );
      // The incident as it stands after the update, frozen in the payload as the incidents API does.
      const messageId = await this.#outbox(pageId, 'INCIDENT_UPDATE', { incidentId, updateId, payload: { incident } });
      return { updateId, messageId };
    });
  }

  #outbox(pageId: number, kind: string, o: { subscriberId?: number; incidentId?: number; updateId?: number; payload?: object }) {
    return this.#insert(
      'INSERT INTO subscriber_messages (page_id, kind, subscriber_id, incident_id, update_id, payload, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      pageId,
      kind,
      o.subscriberId ?? null,
      o.incidentId ?? null,
      o.updateId ?? null,
      JSON.stringify(o.payload ?? {}),
      Date.now(),
    );
  }

  /** A MAINTENANCE outbox row for notice `noticeId`, its payload as the notices API writes it. */
  maintenance(pageId: number, noticeId: number) {
    return this.#outbox(pageId, 'MAINTENANCE', { payload: { notice: { id: noticeId } } });
  }

  close() {
    return this.db.close();
  }
}

/** Passes of the subscriber loops of `d` (`monctl_subscriber_passes_total`), and the backlog (`monctl_subscriber_outbox_pending`). */
async function subscriberLoops(d: TestDaemon): Promise<{ fanOut: number; dispatch: number; pending: number }> {
  const text = await fetch(`${d.url}/actuator/prometheus`, { headers: bearer(d.adminKey) }).then((r) => r.text());
  const value = (loop: string) =>
    Number(new RegExp(`^monctl_subscriber_passes_total\\{loop="${loop}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
  const pending = [...text.matchAll(/^monctl_subscriber_outbox_pending\{stage="\w+"\} (\d+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
  return { fanOut: value('fan-out'), dispatch: value('dispatch'), pending };
}

/**
 * Waits until nothing more can go out to subscribers: an empty backlog, then two more passes of
 * the fan-out and of the dispatcher on every daemon of `ds` (a second send would have happened by
 * then), as test/alerts/world.ts `settled` does for alerts.
 */
export async function subscribersSettled(ds: TestDaemon[]): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    await eventually('an empty subscriber backlog', async () => (await subscriberLoops(ds[0])).pending === 0, deadline - Date.now(), 200);
    const start = await Promise.all(ds.map(subscriberLoops));
    await eventually(
      'two subscriber loop passes',
      async () =>
        (await Promise.all(ds.map(subscriberLoops))).every(
          (now, i) => now.fanOut >= start[i].fanOut + 2 && now.dispatch >= start[i].dispatch + 2,
        ),
      deadline - Date.now(),
      200,
    );
    if ((await subscriberLoops(ds[0])).pending === 0) return;
  }
}
