import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Logger } from '../../logger.ts';
import type { Database } from '../../store/schema.ts';
import { recordAttempt } from '../notifiers/senders.ts';
import type { SendOutcome } from '../types.ts';
import { GIVE_UP_AFTER_MS, nextDelay } from './backoff.ts';
import { loadMessage } from './message.ts';
import type { LoadedSender, SenderLoader } from './sender-port.ts';

export interface DispatcherOptions {
  db: Kysely<Database>;
  log: Logger;
  /** This daemon's pod name: claims carry it, so a restarted pod takes back what its previous run held. */
  pod: string;
  loadSender: SenderLoader;
  retryBaseMs: number;
  /** One attempt's limit; the claim outlives it by far. */
  timeoutMs: number;
  /** Attempts in flight per notifier in this process: a slow notifier only ever holds its own slots. */
  perNotifier?: number;
  /** Attempts in flight in this process. */
  total?: number;
  /** Called once per attempt (metrics). */
  onAttempt?: (notifier: string, result: 'sent' | 'retry' | 'failed', seconds: number) => void;
  /** Called when a notification gives up. */
  onFailed?: (failed: { notifierId: number; notificationId: number; messageId: string; attempts: number; error: string }) => void;
}

type Result = 'sent' | 'retry' | 'failed';

/**
 * Sends due notifications. Each is claimed by a conditional update (state
 * pending, not claimed or its claim expired) that also counts the attempt,
 * so two dispatchers on one database never both send one; the claim lasts
 * far longer than an attempt may, and a daemon killed mid-send leaves it to
 * expire (or to its own next run, which takes back its pod's claims at once).
 * The message id is the notification's, the same on every attempt.
 */
export class Dispatcher {
  readonly #o: Required<Omit<DispatcherOptions, 'onAttempt' | 'onFailed'>> & Pick<DispatcherOptions, 'onAttempt' | 'onFailed'>;
  readonly #token: string;
  readonly #leaseMs: number;
  readonly #inFlight = new Set<Promise<void>>();
  readonly #busy = new Map<number, number>();
  readonly #abort = new AbortController();

  constructor(options: DispatcherOptions) {
    this.#o = { perNotifier: 4, total: 64, ...options };
    this.#token = `${options.pod}#${randomUUID().slice(0, 8)}`;
    this.#leaseMs = Math.max(60_000, options.timeoutMs * 6);
  }

  /**
   * At start: claims left by an earlier run of this pod are free again (that
   * run is gone). `everyPod`: the database has a single daemon (SQLite, held
   * by the data-dir lock), so every claim found is stale.
   */
  async releaseStale(everyPod: boolean): Promise<number> {
    const rows = await this.#o.db
      .selectFrom('notifications')
      .select(['id', 'claimed_by'])
      .where('state', '=', 'pending')
      .where('claimed_by', 'is not', null)
      .execute();
    const stale = rows
      .filter((r) => r.claimed_by !== this.#token && (everyPod || r.claimed_by!.startsWith(`${this.#o.pod}#`)))
      .map((r) => r.id);
    if (stale.length > 0) {
      await this.#o.db
        .updateTable('notifications')
        .set({ claimed_by: null, claimed_until: null })
        .where('id', 'in', stale)
        .where('state', '=', 'pending')
        .execute();
    }
    return stale.length;
  }

  /** Claims what is due and starts sending it; does not wait for the sends. Returns how many it started. */
  async dispatchOnce(now = Date.now()): Promise<number> {
    const free = this.#o.total - this.#inFlight.size;
    if (free <= 0 || this.#abort.signal.aborted) return 0;
    const due = await this.#o.db
      .selectFrom('notifications')
      .select(['id', 'notifier_id'])
      .where('state', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', now)]))
      .orderBy('next_attempt_at')
      .limit(free * 4)
      .execute();
    let started = 0;
    for (const row of due) {
      if (this.#inFlight.size >= this.#o.total) break;
      if ((this.#busy.get(row.notifier_id) ?? 0) >= this.#o.perNotifier) continue;
      const claimed = await this.#o.db
        .updateTable('notifications')
        .set((eb) => ({ claimed_by: this.#token, claimed_until: now + this.#leaseMs, attempts: eb('attempts', '+', 1) }))
        .where('id', '=', row.id)
        .where('state', '=', 'pending')
        .where('next_attempt_at', '<=', now)
        .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', now)]))
        .executeTakeFirst();
      if (Number(claimed.numUpdatedRows) !== 1) continue;
      this.#busy.set(row.notifier_id, (this.#busy.get(row.notifier_id) ?? 0) + 1);
      const sending = this.#deliver(row.id)
        .catch((err) => this.#o.log.error({ err, notification: row.id }, 'notification delivery failed'))
        .finally(() => {
          this.#inFlight.delete(sending);
          const left = (this.#busy.get(row.notifier_id) ?? 1) - 1;
          if (left > 0) this.#busy.set(row.notifier_id, left);
          else this.#busy.delete(row.notifier_id);
        });
      this.#inFlight.add(sending);
      started++;
    }
    return started;
  }

  /** Sends in flight. */
  get inFlight(): number {
    return this.#inFlight.size;
  }

  /** Stops: waits up to `graceMs` for sends in flight, then aborts them and frees their claims for the next run. */
  async stop(graceMs = 3000): Promise<void> {
    const pending = [...this.#inFlight];
    const timer = new Promise<void>((resolve) => setTimeout(resolve, graceMs).unref());
    await Promise.race([Promise.allSettled(pending), timer]);
    this.#abort.abort();
    await Promise.allSettled([...this.#inFlight]);
  }

  async #deliver(id: number): Promise<void> {
    const db = this.#o.db;
    const row = await db.selectFrom('notifications').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const message = await loadMessage(db, row);
    const sender = await this.#o.loadSender(row.notifier_id);
    if (!sender?.notifier.enabled || message.items.length === 0) {
      const why = !sender ? 'the notifier was deleted' : !sender.notifier.enabled ? 'the notifier is disabled' : 'no alerts left to send';
      await this.#finish(row, { ok: false, statusCode: null, error: why, latencyMs: 0, retryable: false }, sender);
      return;
    }
    const signal = AbortSignal.any([AbortSignal.timeout(this.#o.timeoutMs), this.#abort.signal]);
    const started = performance.now();
    let outcome: SendOutcome;
    try {
      outcome = await sender.send(message, signal);
    } catch (err) {
      outcome = { ok: false, statusCode: null, error: (err as Error).message, latencyMs: performance.now() - started, retryable: true };
    }
    if (this.#abort.signal.aborted && !outcome.ok) {
      // Shutting down: not a failed attempt; the next run sends it again with the same id.
      await db
        .updateTable('notifications')
        .set((eb) => ({ claimed_by: null, claimed_until: null, attempts: eb('attempts', '-', 1) }))
        .where('id', '=', id)
        .where('claimed_by', '=', this.#token)
        .execute();
      return;
    }
    await recordAttempt(db, {
      notifierId: row.notifier_id,
      notificationId: id,
      messageId: row.message_id,
      attempt: row.attempts,
      ...outcome,
    });
    await this.#finish(row, outcome, sender);
  }

  async #finish(
    row: { id: number; notifier_id: number; message_id: string; attempts: number; created_at: number },
    outcome: SendOutcome,
    sender: LoadedSender | undefined,
  ): Promise<void> {
    const now = Date.now();
    const result: Result = outcome.ok ? 'sent' : !outcome.retryable || now - row.created_at >= GIVE_UP_AFTER_MS ? 'failed' : 'retry';
    const update =
      result === 'sent'
        ? { state: 'sent' as const, sent_at: now, last_error: null }
        : result === 'failed'
          ? { state: 'failed' as const, last_error: outcome.error ?? `status ${outcome.statusCode}` }
          : {
              next_attempt_at: now + nextDelay(row.attempts, this.#o.retryBaseMs, outcome.retryAfterMs),
              last_error: outcome.error ?? `status ${outcome.statusCode}`,
            };
    await this.#o.db
      .updateTable('notifications')
      .set({ ...update, claimed_by: null, claimed_until: null })
      .where('id', '=', row.id)
      .where('claimed_by', '=', this.#token)
      .execute();
    this.#o.onAttempt?.(sender?.notifier.name ?? String(row.notifier_id), result, outcome.latencyMs / 1000);
    if (result === 'failed') {
      this.#o.onFailed?.({
        notifierId: row.notifier_id,
        notificationId: row.id,
        messageId: row.message_id,
        attempts: row.attempts,
        error: update.last_error ?? 'failed',
      });
    }
  }
}
