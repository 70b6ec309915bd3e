import type { Kysely } from 'kysely';
import type { Role } from '../../../src/api/schemas/auth.ts';
import { conflict } from '../../../src/errors.ts';
import type { DaemonConfig } from '../../config.ts';
import type { Database } from '../../store/schema.ts';
import type { SecretBox } from '../secret-box.ts';
import { issueRecoveryCodes } from './recovery-codes.ts';
import { checkCode } from './verify.ts';

/** The columns of a user's second factor, as the rest of this folder reads them. */
export interface Factor {
  id: number;
  username: string;
  role: Role;
  /** The plain base32 secret (enabled or awaiting confirmation), when one is stored. */
  secret: string | undefined;
  enabled: boolean;
  /** Users created by single sign-on have no password and use their provider's second factor. */
  hasPassword: boolean;
}

export async function loadFactor(db: Kysely<Database>, box: SecretBox, where: { id: number } | { username: string }) {
  let query = db.selectFrom('users').select(['id', 'username', 'role', 'password_hash', 'totp_secret', 'totp_enabled_at']);
  query = 'id' in where ? query.where('id', '=', where.id) : query.where('username', '=', where.username);
  const row = await query.executeTakeFirst();
  if (!row) return undefined;
  return {
    id: row.id,
    username: row.username,
    role: row.role as Role,
    secret: row.totp_secret ? box.open(row.totp_secret) : undefined,
    enabled: row.totp_enabled_at !== null,
    hasPassword: row.password_hash !== '',
  } satisfies Factor;
}

/** Whether `--two-factor-required` demands a second factor of this role. */
export function factorRequired(config: Pick<DaemonConfig, 'identity'>, role: Role): boolean {
  const policy = config.identity.twoFactorRequired;
  return policy === 'all' || (policy === 'admin' && role === 'ADMIN');
}

/** Stores a new unconfirmed secret (replacing an unconfirmed one); login is unchanged until it is confirmed. */
export async function storePendingSecret(db: Kysely<Database>, box: SecretBox, userId: number, secret: string): Promise<void> {
  const stored = await db
    .updateTable('users')
    .set({ totp_secret: box.seal(secret), totp_last_step: null })
    .where('id', '=', userId)
    .where('totp_enabled_at', 'is', null)
    .executeTakeFirst();
  if (Number(stored.numUpdatedRows) !== 1) throw conflict('A second factor is enabled already: turn it off first to enrol again');
}

/**
 * Enables `secret` once `code` proves the user's app has it: the answer is the ten recovery
 * codes, or undefined for a wrong code. 409 when another enrolment finished first.
 */
export async function enableFactor(
  db: Kysely<Database>,
  box: SecretBox,
  userId: number,
  secret: string,
  code: string,
): Promise<string[] | undefined> {
  if (!(await checkCode(db, userId, code, { secret, recovery: false }))) return undefined;
  const now = Date.now();
  return db.transaction().execute(async (trx) => {
    const enabled = await trx
      .updateTable('users')
      .set({ totp_secret: box.seal(secret), totp_enabled_at: now, updated_at: now })
      .where('id', '=', userId)
      .where('totp_enabled_at', 'is', null)
      .executeTakeFirst();
    if (Number(enabled.numUpdatedRows) !== 1) throw conflict('A second factor is enabled already');
    return issueRecoveryCodes(trx, userId, now);
  });
}

/** Forgets the second factor: secret, replay step, failure count and recovery codes (run it in a transaction). */
export async function clearFactor(trx: Kysely<Database>, userId: number): Promise<void> {
  await trx
    .updateTable('users')
    .set({ totp_secret: null, totp_enabled_at: null, totp_last_step: null, totp_failures: 0, totp_failed_at: null })
    .where('id', '=', userId)
    .execute();
  await trx.deleteFrom('user_recovery_codes').where('user_id', '=', userId).execute();
}
