import type { Kysely } from 'kysely';
import type { NotifierType } from '../../../src/api/schemas/notifiers.ts';
import type { DaemonConfig } from '../../config.ts';
import type { DaemonContext } from '../../context.ts';
import type { Database } from '../../store/schema.ts';
import type { OutgoingMessage, SendOutcome } from '../types.ts';
import type { LoadedNotifier } from './config-types.ts';
import { sendEmail } from './email.ts';
import type { PostOptions } from './http-post.ts';
import { sendNtfy } from './ntfy.ts';
import type { RenderedMessage } from './render.ts';
import { sendSlack } from './slack.ts';
import { CHANNELS } from './channels/index.ts';
import { loaded, openSecrets } from './store.ts';
import { renderWithTemplates, templateNote } from './templates.ts';
import { sendWebhook } from './webhook.ts';

/**
 * What the dispatcher (and the test endpoint) calls: load a notifier with its
 * secrets opened, then `send` one message. A send never throws and never
 * outlives `--notifier-timeout` (10 s): every failure is a SendOutcome, whose
 * `latencyMs` is the attempt's wall time (monotonic clock), for
 * `monctl_notification_delivery_seconds`.
 */
export interface NotifierSender {
  notifier: { id: number; name: string; type: NotifierType; enabled: boolean };
  send(message: OutgoingMessage, signal: AbortSignal): Promise<SendOutcome>;
}

/**
 * What a sender uses of the daemon: the notifiers' one HTTP pool
 * (`ctx.notifierPool`, createNotifierDispatcher built by daemon/services.ts and closed after the
 * modules stop) and the send timeout it was built with.
 */
export type SenderDeps = Pick<DaemonContext, 'db' | 'log' | 'installSecret' | 'notifierPool'> & {
  config: Pick<DaemonConfig, 'publicUrl' | 'notifierTimeoutMs'>;
};

/** The notifier `notifierId` ready to send, or undefined when it does not exist (deleted since the message was made). */
export async function loadSender(ctx: SenderDeps, notifierId: number): Promise<NotifierSender | undefined> {
  const row = await ctx.db.selectFrom('notifiers').selectAll().where('id', '=', notifierId).executeTakeFirst();
  if (!row) return undefined;
  const secrets = openSecrets(ctx, row.secrets_enc);
  const n = loaded(row, secrets ?? {});
  const publicUrl = ctx.config.publicUrl ?? null;
  return {
    notifier: { id: n.id, name: n.name, type: n.type, enabled: n.enabled },
    async send(message, signal) {
      // Another install secret (a database copied alone) cannot open them: nothing to retry until they are given again.
      if (secrets === undefined) {
        ctx.log.warn({ notifier: n.name }, 'notifier secrets cannot be decrypted with this install secret');
        return {
          ok: false,
          statusCode: null,
          error: 'the secrets of this notifier cannot be decrypted with this install secret: set them again',
          latencyMs: 0,
          retryable: false,
        };
      }
      const started = performance.now();
      try {
        // A template that fails sends the default message: the alert is never lost, and the attempt says why.
        const { rendered, templateError } = await renderWithTemplates(n, message, { publicUrl });
        if (templateError) ctx.log.warn({ notifier: n.name, templateError }, 'notifier template failed; the default message is sent');
        const outcome = await deliver(
          ctx,
          n,
          message,
          rendered,
          { dispatcher: ctx.notifierPool, timeoutMs: ctx.config.notifierTimeoutMs, signal },
          publicUrl,
        );
        if (!templateError) return outcome;
        return { ...outcome, note: [templateNote(templateError), outcome.note].filter(Boolean).join('; ') };
      } catch (err) {
        // A bug of ours must not take the dispatcher down: it is a failed attempt like any other.
        ctx.log.error({ err, notifier: n.name }, 'notifier send failed unexpectedly');
        return {
          ok: false,
          statusCode: null,
          error: `internal error: ${(err as Error).message}`,
          latencyMs: Math.round(performance.now() - started),
          retryable: true,
        };
      }
    },
  };
}

function deliver(
  ctx: SenderDeps,
  n: LoadedNotifier,
  message: OutgoingMessage,
  rendered: RenderedMessage,
  io: PostOptions,
  publicUrl: string | null,
): Promise<SendOutcome> {
  switch (n.type) {
    case 'WEBHOOK':
      return sendWebhook(n, message, rendered, publicUrl, io);
    case 'SLACK':
      return sendSlack(n, message, rendered, io);
    case 'NTFY':
      return sendNtfy(n, message, rendered, io);
    case 'EMAIL':
      return sendEmail(n, message, rendered, io);
    default: {
      const channel = CHANNELS[n.type];
      if (channel) return channel.send(n, message, rendered, io);
      ctx.log.error({ notifier: n.name, type: n.type }, 'unknown notifier type');
      return Promise.resolve({
        ok: false,
        statusCode: null,
        error: `unknown notifier type ${String(n.type)}`,
        latencyMs: 0,
        retryable: false,
      });
    }
  }
}

/** One row of notification_attempts: the ids of the attempt and how it went (a SendOutcome spreads into it). */
export interface AttemptRecord {
  notifierId: number;
  /** null for a test message. */
  notificationId: number | null;
  messageId: string;
  /** 1 for the first attempt of a message. */
  attempt: number;
  /** Epoch ms; now when absent. */
  at?: number;
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  latencyMs: number;
  retryable?: boolean;
  /** The delivery log's note (a template that failed to render). */
  note?: string | null;
}

/** Records one delivery attempt; returns its id. Use the dispatcher's transaction as `db` to commit it with the claim's outcome. */
export async function recordAttempt(db: Kysely<Database>, a: AttemptRecord): Promise<number> {
  const row = await db
    .insertInto('notification_attempts')
    .values({
      notifier_id: a.notifierId,
      notification_id: a.notificationId,
      message_id: a.messageId,
      attempt: a.attempt,
      at: a.at ?? Date.now(),
      ok: a.ok ? 1 : 0,
      status_code: a.statusCode,
      error: a.error === null ? null : a.error.slice(0, 1000),
      latency_ms: Math.max(0, Math.round(a.latencyMs)),
      note: a.note ? a.note.slice(0, 1000) : null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}
