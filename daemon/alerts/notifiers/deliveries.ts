import { randomBytes } from 'node:crypto';
import type { notifierOperations } from '../../../src/api/ops/notifiers.ts';
import { conflict, notFound } from '../../../src/errors.ts';
import { formatDateTime } from '../../../src/time.ts';
import type { HandlersOf } from '../../http/bind.ts';
import { testMessage } from './samples.ts';
import { loadSender, recordAttempt } from './senders.ts';
import { generateSigningSecret } from './signing.ts';
import { notifierRow, openSecrets, sealSecrets } from './store.ts';

type Ops = Pick<typeof notifierOperations, 'testNotifier' | 'rotateNotifierSigningSecret' | 'listNotifierDeliveries'>;

/** A fresh Standard Webhooks message id for a test message. */
export const testMessageId = () => `msg_test_${randomBytes(12).toString('base64url')}`;

/** The test message, the signing secret and the delivery log of a notifier. */
export const deliveryHandlers: HandlersOf<Ops> = {
  async testNotifier({ ctx, params, body, res }) {
    const sender = await loadSender(ctx, params.id);
    if (!sender) throw notFound(`Notifier ${params.id} does not exist`);
    const messageId = testMessageId();
    // A client that goes away takes its test with it.
    const gone = new AbortController();
    const onClose = () => gone.abort();
    res.once('close', onClose);
    try {
      const outcome = await sender.send(testMessage(messageId, body?.event, Date.now()), gone.signal);
      await recordAttempt(ctx.db, { notifierId: params.id, notificationId: null, messageId, attempt: 1, ...outcome });
      ctx.log.info({ notifier: sender.notifier.name, ok: outcome.ok, statusCode: outcome.statusCode }, 'notifier test sent');
      return {
        ok: outcome.ok,
        statusCode: outcome.statusCode,
        error: outcome.error,
        latencyMs: outcome.latencyMs,
        retryable: outcome.retryable,
        messageId,
        note: outcome.note ?? null,
      };
    } finally {
      res.off('close', onClose);
    }
  },

  async rotateNotifierSigningSecret({ ctx, params }) {
    const row = await notifierRow(ctx, params.id);
    if (row.type !== 'WEBHOOK') throw conflict(`Notifier ${row.name} is ${row.type}: only WEBHOOK notifiers sign their messages`);
    const signingSecret = generateSigningSecret();
    const secrets = { ...openSecrets(ctx, row.secrets_enc), signingSecret };
    await ctx.db
      .updateTable('notifiers')
      .set({ secrets_enc: sealSecrets(ctx, secrets), updated_at: Date.now() })
      .where('id', '=', row.id)
      .execute();
    ctx.log.info({ notifier: row.name }, 'notifier signing secret rotated');
    return { signingSecret };
  },

  async listNotifierDeliveries({ ctx, params, query, res }) {
    await notifierRow(ctx, params.id);
    let rows = ctx.db.selectFrom('notification_attempts').selectAll().where('notifier_id', '=', params.id);
    if (query.before !== undefined) rows = rows.where('id', '<', query.before);
    const page = await rows
      .orderBy('id', 'desc')
      .limit(query.limit + 1)
      .execute();
    const more = page.length > query.limit;
    if (more) page.pop();
    if (more && page.length) {
      res.setHeader(
        'Link',
        `</admin/api/notifiers/${params.id}/deliveries?limit=${query.limit}&before=${page[page.length - 1].id}>; rel="next"`,
      );
    }
    return page.map((a) => ({
      id: a.id,
      at: formatDateTime(a.at),
      messageId: a.message_id,
      notificationId: a.notification_id,
      attempt: a.attempt,
      ok: a.ok === 1,
      statusCode: a.status_code,
      error: a.error,
      latencyMs: a.latency_ms,
      note: a.note,
    }));
  },
};
