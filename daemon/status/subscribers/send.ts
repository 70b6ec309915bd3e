import type { SmtpMail } from '../../alerts/notifiers/email.ts';
import { sendSmtp } from '../../alerts/notifiers/email.ts';
import { loaded, openSecrets } from '../../alerts/notifiers/store.ts';
import type { SendOutcome } from '../../alerts/types.ts';
import type { DaemonContext } from '../../context.ts';
import type { DeliveryContent } from './content.ts';
import { composeMail } from './mail.ts';
import { subscriberBox } from './secret.ts';
import { sendSubscriberWebhook } from './webhook.ts';

export interface SendDeps {
  ctx: Pick<DaemonContext, 'db' | 'log' | 'installSecret' | 'notifierPool'> & {
    config: Pick<DaemonContext['config'], 'notifierTimeoutMs'>;
  };
  /** The dispatcher stopping. */
  signal: AbortSignal;
}

/** A failure no retry can mend (a setting missing, a secret this install cannot open): given up at once. */
const permanent = (error: string): SendOutcome => ({ ok: false, statusCode: null, error, latencyMs: 0, retryable: false });

/**
 * One attempt of one delivery: a mail through the SMTP settings of the page's EMAIL notifier
 * (the alerts' own sender, alerts/notifiers/email.ts), or a signed POST to a webhook subscriber.
 * Never throws, never outlives --notifier-timeout.
 */
export async function sendDelivery(deps: SendDeps, c: DeliveryContent): Promise<SendOutcome> {
  const { ctx, signal } = deps;
  const io = { timeoutMs: ctx.config.notifierTimeoutMs, signal };
  try {
    if (c.subscriber.kind === 'WEBHOOK') {
      if (c.kind === 'CONFIRM') return permanent('a webhook subscriber has nothing to confirm');
      const secret = c.subscriber.secret_enc === null ? undefined : subscriberBox(ctx.installSecret).open(c.subscriber.secret_enc);
      if (secret === undefined) return permanent('the signing secret of this subscriber cannot be opened with this install secret');
      return await sendSubscriberWebhook(c, secret, { ...io, dispatcher: ctx.notifierPool });
    }
    let mail: SmtpMail;
    try {
      mail = composeMail(c);
    } catch (err) {
      return permanent((err as Error).message);
    }
    if (c.page.emailNotifierId === null) return permanent('the status page names no EMAIL notifier (emailNotifierId)');
    const row = await ctx.db.selectFrom('notifiers').selectAll().where('id', '=', c.page.emailNotifierId).executeTakeFirst();
    if (row?.type !== 'EMAIL') return permanent(`notifier ${c.page.emailNotifierId} is not an EMAIL notifier`);
    const secrets = openSecrets(ctx, row.secrets_enc);
    if (secrets === undefined) return permanent('the secrets of the EMAIL notifier cannot be decrypted with this install secret');
    return await sendSmtp(loaded(row, secrets), mail, io);
  } catch (err) {
    // A bug of ours (or a database hiccup) is a failed attempt like any other, retried.
    ctx.log.error({ err, delivery: c.delivery.id }, 'subscriber send failed unexpectedly');
    return { ok: false, statusCode: null, error: `internal error: ${(err as Error).message}`, latencyMs: 0, retryable: true };
  }
}
