import type { Kysely } from 'kysely';
import { HttpError } from '../../../src/errors.ts';
import type { Database } from '../../store/schema.ts';
import { consumeRecoveryCode } from './recovery-codes.ts';
import { countingFailures, retryAfterSeconds } from './throttle.ts';
import { asTotpCode, stepOf } from './totp.ts';

export type CodeKind = 'totp' | 'recovery';

/** A claim that lost its race against another attempt reads again, a few times. */
const CLAIM_TRIES = 5;

/**
 * Checks one code of a user against `secret` (the plain base32 secret) and, when `recovery`,
 * the user's unused recovery codes. Every attempt is counted as a failure before the code is
 * looked at (a compare-and-set on `totp_failures`, so parallel guesses on any pod cannot
 * share one free attempt) and the count is cleared by a success. A TOTP code is taken once:
 * its step must be above `totp_last_step`, set in the same conditional UPDATE.
 * Throws 429 `two-factor-throttled` with Retry-After; answers the kind of code, or undefined.
 */
export async function checkCode(
  db: Kysely<Database>,
  userId: number,
  code: string,
  opts: { secret: string; recovery: boolean; now?: number },
): Promise<CodeKind | undefined> {
  const now = opts.now ?? Date.now();
  await claimAttempt(db, userId, now);
  const kind = await match(db, userId, code, opts.secret, opts.recovery, now);
  if (kind) await db.updateTable('users').set({ totp_failures: 0, totp_failed_at: null }).where('id', '=', userId).execute();
  return kind;
}

async function claimAttempt(db: Kysely<Database>, userId: number, now: number): Promise<void> {
  for (let attempt = 0; attempt < CLAIM_TRIES; attempt++) {
    const row = await db.selectFrom('users').select(['totp_failures', 'totp_failed_at']).where('id', '=', userId).executeTakeFirst();
    if (!row) throw new HttpError(404, 'not-found', 'The user no longer exists');
    const wait = retryAfterSeconds(row.totp_failures, row.totp_failed_at, now);
    if (wait > 0) throw throttled(wait);
    const counting = countingFailures(row.totp_failures, row.totp_failed_at, now);
    const claimed = await db
      .updateTable('users')
      .set({ totp_failures: counting + 1, totp_failed_at: now })
      .where('id', '=', userId)
      .where('totp_failures', '=', row.totp_failures)
      .executeTakeFirst();
    if (Number(claimed.numUpdatedRows) === 1) return;
  }
  throw throttled(1);
}

async function match(
  db: Kysely<Database>,
  userId: number,
  code: string,
  secret: string,
  recovery: boolean,
  now: number,
): Promise<CodeKind | undefined> {
  const totp = asTotpCode(code);
  if (totp !== undefined) {
    const step = stepOf(secret, totp, now);
    if (step === undefined) return undefined;
    const taken = await db
      .updateTable('users')
      .set({ totp_last_step: step })
      .where('id', '=', userId)
      .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
      .executeTakeFirst();
    return Number(taken.numUpdatedRows) === 1 ? 'totp' : undefined;
  }
  return recovery && (await consumeRecoveryCode(db, userId, code, now)) ? 'recovery' : undefined;
}

export function throttled(seconds: number): HttpError {
  return new HttpError(429, 'two-factor-throttled', `Too many wrong codes for this user; retry in ${seconds} s`, {
    headers: { 'Retry-After': String(seconds) },
  });
}
