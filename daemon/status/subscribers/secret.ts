import { boxFor } from '../../auth/secret-box.ts';
import type { DaemonContext } from '../../context.ts';

/**
 * A WEBHOOK subscriber's signing secret (`whsec_…`) at rest, in `status_subscribers.secret_enc`:
 * sealed with the install's secret box under a purpose of its own, so that neither a notifier's
 * box nor a registry password's can open it. Every pod on the database can.
 */
export function sealSubscriberSecret(ctx: Pick<DaemonContext, 'installSecret'>, secret: string): string {
  return boxFor(ctx.installSecret, 'subscriber-secrets').seal(secret);
}

/** The secret, or undefined when the box is not this install's (a database copied alone). */
export function openSubscriberSecret(ctx: Pick<DaemonContext, 'installSecret'>, sealed: string | null): string | undefined {
  return sealed === null ? undefined : boxFor(ctx.installSecret, 'subscriber-secrets').open(sealed);
}
