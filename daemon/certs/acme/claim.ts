import type { Kysely } from 'kysely';
import type { CertificateRow, Database } from '../../store/schema.ts';

/** An order holds its name this long at most; a daemon that died mid-order frees it then. */
export const CLAIM_MS = 10 * 60_000;

/**
 * Claims an ACME row for one order with a conditional update: it succeeds
 * only if nobody holds the row, its retry time has come, and it is still as
 * `row` was read (the same issued certificate, the same failure count). So of
 * several daemons that saw the name due, one orders; one that read the row
 * before another daemon's order finished finds it changed and stays out.
 */
export async function claimOrder(db: Kysely<Database>, row: CertificateRow, claim: string, now = Date.now()): Promise<boolean> {
  let q = db
    .updateTable('certificates')
    .set({ claimed_by: claim, claimed_until: now + CLAIM_MS })
    .where('id', '=', row.id)
    .where('failures', '=', row.failures)
    .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<=', now)]))
    .where((eb) => eb.or([eb('next_attempt_at', 'is', null), eb('next_attempt_at', '<=', now)]));
  q = row.issued_at === null ? q.where('issued_at', 'is', null) : q.where('issued_at', '=', row.issued_at);
  return Number((await q.executeTakeFirst()).numUpdatedRows) === 1;
}
