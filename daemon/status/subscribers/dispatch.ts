import { randomUUID } from 'node:crypto';
import { GIVE_UP_AFTER_MS, nextDelay } from '../../alerts/delivery/backoff.ts';
import type { SendOutcome } from '../../alerts/types.ts';
import type { DaemonContext } from '../../context.ts';
import { loadContent } from './content.ts';
import { type SendDeps, sendDelivery } from './send.ts';
import { SubscriberTokens } from './tokens.ts';

export type DeliveryResult = 'sent' | 'retry' | 'failed';

export interface SubscriberDispatcherOptions {
  /** Attempts in flight per receiver (one page's SMTP server, one webhook): a slow one holds only its own slots. */
  perReceiver?: number;
  /** Attempts in flight in this process. */
  total?: number;
  onAttempt?: (kind: string, result: DeliveryResult, seconds: number) => void;
}

type Ctx = Pick<DaemonContext, 'db' | 'log' | 'installSecret' | 'notifierPool' | 'pod'> & {
  config: Pick<DaemonContext['config'], 'publicUrl' | 'notifierTimeoutMs' | 'notifierRetryBaseMs'>;
};

/**
 * Sends due subscriber deliveries as the alert dispatcher sends notifications
 * (docs/DECISIONS.md#alerts-outbox-routing-delivery): each is claimed by a
 * conditional update (pending, due, unclaimed or its claim expired) that also
 * counts the attempt, so two pods never both send one; retries back off as
 * notifications do (alerts/delivery/backoff.ts) for 24 h; a permanent refusal
 * stops at once. The key (Message-ID, webhook-id) is the same on every attempt.
 */
export class SubscriberDispatcher {
  readonly #ctx: Ctx;
  readonly #deps: SendDeps;
  readonly #token: string;
  readonly #leaseMs: number;
  readonly #perReceiver: number;
  readonly #total: number;
  readonly #onAttempt: SubscriberDispatcherOptions['onAttempt'];
  readonly #inFlight = new Set<Promise<void>>();
  readonly #busy = new Map<string, number>();
  readonly #abort = new AbortController();
  readonly #tokens: SubscriberTokens;

  constructor(ctx: Ctx, options: SubscriberDispatcherOptions = {}) {
    this.#ctx = ctx;
    this.#deps = { ctx, signal: this.#abort.signal };
    this.#token = `${ctx.pod.name}#${randomUUID().slice(0, 8)}`;
    this.#leaseMs = Math.max(60_000, ctx.config.notifierTimeoutMs * 6);
    this.#perReceiver = options.perReceiver ?? 4;
    this.#total = options.total ?? 32;
    this.#onAttempt = options.onAttempt;
    this.#tokens = new SubscriberTokens(ctx.installSecret);
  }

  /** At start: claims of an earlier run of this pod (of any run, `everyPod`: SQLite has one daemon) are free again. */
  async releaseStale(everyPod: boolean): Promise<void> {
    const db = this.#ctx.db;
    const claimed = await db
      .selectFrom('subscriber_deliveries')
      .select(['id', 'claimed_by'])
      .where('state', '=', 'pending')
      .where('claimed_by', 'is not', null)
      .execute();
    const stale = claimed.filter((r) => everyPod || r.claimed_by!.startsWith(`${this.#ctx.pod.name}#`)).map((r) => r.id);
    for (let i = 0; i < stale.length; i += 500) {
      await db
        .updateTable('subscriber_deliveries')
        .set({ claimed_by: null, claimed_until: null })
        .where('id', 'in', stale.slice(i, i + 500))
        .where('state', '=', 'pending')
        .execute();
    }
  }

  /** Claims what is due and starts sending it; does not wait for the sends. Returns how many it started. */
  async dispatchOnce(now = Date.now()): Promise<number> {
    const free = this.#total - this.#inFlight.size;
    if (free <= 0 || this.#abort.signal.aborted) return 0;
    const db = this.#ctx.db;
    const due = await db
      .selectFrom('subscriber_deliveries as d')
      .innerJoin('status_subscribers as s', 's.id', 'd.subscriber_id')
      .innerJoin('subscriber_messages as m', 'm.id', 'd.message_id')
      .innerJoin('status_pages as p', 'p.id', 'm.page_id')
      .select(['d.id', 's.kind', 's.id as subscriberId', 'p.email_notifier_id as notifierId'])
      .where('d.state', '=', 'pending')
      .where('d.next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('d.claimed_until', 'is', null), eb('d.claimed_until', '<', now)]))
      .orderBy('d.next_attempt_at')
      .limit(free * 4)
      .execute();
    let started = 0;
    for (const row of due) {
      if (this.#inFlight.size >= this.#total) break;
      // Mail of every page naming one notifier goes to one SMTP server; each webhook is its own receiver.
      const receiver = row.kind === 'EMAIL' ? `smtp:${row.notifierId}` : `hook:${row.subscriberId}`;
      if ((this.#busy.get(receiver) ?? 0) >= this.#perReceiver) continue;
      const claimed = await db
        .updateTable('subscriber_deliveries')
        .set((eb) => ({ claimed_by: this.#token, claimed_until: now + this.#leaseMs, attempts: eb('attempts', '+', 1) }))
        .where('id', '=', row.id)
        .where('state', '=', 'pending')
        .where('next_attempt_at', '<=', now)
        .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', now)]))
        .executeTakeFirst();
      if (Number(claimed.numUpdatedRows) !== 1) continue;
      this.#busy.set(receiver, (this.#busy.get(receiver) ?? 0) + 1);
      const sending = this.#deliver(row.id, row.kind)
        .catch((err) => this.#ctx.log.error({ err, delivery: row.id }, 'subscriber delivery failed'))
        .finally(() => {
          this.#inFlight.delete(sending);
          const left = (this.#busy.get(receiver) ?? 1) - 1;
          if (left > 0) this.#busy.set(receiver, left);
          else this.#busy.delete(receiver);
        });
      this.#inFlight.add(sending);
      started++;
    }
    return started;
  }

  /** Stops: waits up to `graceMs` for sends in flight, then aborts them (their claims are freed for the next run). */
  async stop(graceMs = 3000): Promise<void> {
    const timer = new Promise<void>((resolve) => setTimeout(resolve, graceMs).unref());
    await Promise.race([Promise.allSettled([...this.#inFlight]), timer]);
    this.#abort.abort();
    await Promise.allSettled([...this.#inFlight]);
  }

  async #deliver(id: number, kind: string): Promise<void> {
    const content = await loadContent(this.#ctx.db, id, this.#tokens, this.#ctx.config.publicUrl);
    const outcome: SendOutcome = content
      ? await sendDelivery(this.#deps, content)
      : { ok: false, statusCode: null, error: 'what it announced was deleted', latencyMs: 0, retryable: false };
    if (this.#abort.signal.aborted && !outcome.ok) {
      // Shutting down: not a failed attempt; the next run sends it again with the same key.
      await this.#ctx.db
        .updateTable('subscriber_deliveries')
        .set((eb) => ({ claimed_by: null, claimed_until: null, attempts: eb('attempts', '-', 1) }))
        .where('id', '=', id)
        .where('claimed_by', '=', this.#token)
        .execute();
      return;
    }
    const now = Date.now();
    const row = await this.#ctx.db
      .selectFrom('subscriber_deliveries')
      .select(['attempts', 'created_at'])
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) return;
    const error = outcome.error ?? `status ${outcome.statusCode}`;
    const result: DeliveryResult = outcome.ok
      ? 'sent'
      : !outcome.retryable || now - row.created_at >= GIVE_UP_AFTER_MS
        ? 'failed'
        : 'retry';
    const update =
      result === 'sent'
        ? { state: 'sent' as const, sent_at: now, last_error: null }
        : result === 'failed'
          ? { state: 'failed' as const, last_error: error.slice(0, 1000) }
          : {
              next_attempt_at: now + nextDelay(row.attempts, this.#ctx.config.notifierRetryBaseMs, outcome.retryAfterMs),
              last_error: error.slice(0, 1000),
            };
    await this.#ctx.db
      .updateTable('subscriber_deliveries')
      .set({ ...update, claimed_by: null, claimed_until: null })
      .where('id', '=', id)
      .where('claimed_by', '=', this.#token)
      .execute();
    if (result !== 'sent') this.#ctx.log.warn({ delivery: id, attempt: row.attempts, error, result }, 'subscriber delivery not sent');
    this.#onAttempt?.(kind, result, outcome.latencyMs / 1000);
  }
}
