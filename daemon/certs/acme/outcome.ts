import type { DaemonContext } from '../../context.ts';
import { enqueueAlertEvent } from '../../alerts/alert-events.ts';
import type { CertificateRow } from '../../store/schema.ts';
import { certBox } from '../box.ts';
import { describeChain } from '../pem.ts';
import { retryDelay } from './backoff.ts';
import type { Issued } from './order.ts';

/** What recording an order's outcome uses of the daemon. */
export type OutcomeDeps = Pick<DaemonContext, 'db' | 'installSecret'>;

/** Writes a new certificate to the row this daemon claimed (nothing when the claim was lost meanwhile). */
export async function recordIssued(ctx: OutcomeDeps, row: CertificateRow, claim: string, issued: Issued): Promise<boolean> {
  const d = describeChain(issued.chainPem);
  const now = Date.now();
  const result = await ctx.db
    .updateTable('certificates')
    .set({
      cert_pem: issued.chainPem,
      key_enc: certBox(ctx).seal(issued.keyPem),
      issuer: d.issuer,
      serial: d.serial,
      not_before: d.notBefore,
      not_after: d.notAfter,
      challenge: issued.challenge,
      // Never the same value twice: other daemons tell a new certificate by it.
      issued_at: Math.max(now, Number(row.issued_at ?? 0) + 1),
      last_error: null,
      last_error_at: null,
      failures: 0,
      next_attempt_at: null,
      claimed_by: null,
      claimed_until: null,
      updated_at: now,
    })
    .where('id', '=', row.id)
    .where('claimed_by', '=', claim)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Records a failed order on the row, with the next attempt no sooner than an
 * hour (doubling up to a day), and its CERT_RENEWAL_FAILED alert event in
 * the same transaction.
 */
export async function recordFailed(ctx: OutcomeDeps, row: CertificateRow, claim: string, error: string): Promise<number | undefined> {
  const now = Date.now();
  const failures = Number(row.failures) + 1;
  const next = now + retryDelay(failures);
  const name = row.acme_name ?? '';
  return ctx.db.transaction().execute(async (trx) => {
    const result = await trx
      .updateTable('certificates')
      .set({
        last_error: error.slice(0, 2000),
        last_error_at: now,
        failures,
        next_attempt_at: next,
        claimed_by: null,
        claimed_until: null,
        updated_at: now,
      })
      .where('id', '=', row.id)
      .where('claimed_by', '=', claim)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) return undefined;
    const notAfter = row.not_after === null ? null : Number(row.not_after);
    await enqueueAlertEvent(
      trx,
      {
        kind: 'CERT_RENEWAL_FAILED',
        subject: { type: 'certificate', id: Number(row.id), name, target: null },
        incidentId: null,
        openedAt: null,
        resolvedAt: null,
        cause: { message: error.slice(0, 500), errorCode: 'ACME_ORDER_FAILED' },
        cert: notAfter === null ? null : { notAfter, thresholdDays: Math.max(0, Math.floor((notAfter - now) / 86_400_000)) },
      },
      { at: now },
    );
    return next;
  });
}

/**
 * Marks a row whose name cannot be ordered with this configuration (FAILED,
 * its reason in lastError), once: no alert and no retry time, so the order
 * starts at the first pass after a restart with the missing setting.
 * True when the row changed.
 */
export async function recordUnorderable(ctx: OutcomeDeps, row: CertificateRow, error: string): Promise<boolean> {
  if (row.last_error === error) return false;
  const now = Date.now();
  const result = await ctx.db
    .updateTable('certificates')
    .set({ last_error: error, last_error_at: now, failures: Math.max(1, Number(row.failures)), next_attempt_at: null, updated_at: now })
    .where('id', '=', row.id)
    .where('cert_pem', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
