import { randomInt } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../store/schema.ts';
import { sha256 } from '../tokens.ts';

const COUNT = 10;
/** No 0/o, 1/l/i: read off paper and typed back. */
const ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

/** The form a recovery code is hashed in: lower case, without the spaces and dashes people type. */
export function normaliseRecoveryCode(code: string): string {
  return code.toLowerCase().replace(/[\s-]+/g, '');
}

/** Ten new codes (`xxxxx-xxxxx`, 49 bits each) replace the user's old ones; the plain codes are answered once. */
export async function issueRecoveryCodes(trx: Transaction<Database> | Kysely<Database>, userId: number, now: number): Promise<string[]> {
  const codes = Array.from({ length: COUNT }, () => {
    const chars = Array.from({ length: 10 }, () => ALPHABET[randomInt(ALPHABET.length)]).join('');
    return `${chars.slice(0, 5)}-${chars.slice(5)}`;
  });
  await trx.deleteFrom('user_recovery_codes').where('user_id', '=', userId).execute();
  await trx
    .insertInto('user_recovery_codes')
    .values(codes.map((code) => ({ user_id: userId, code_hash: sha256(normaliseRecoveryCode(code)), created_at: now, used_at: null })))
    .execute();
  return codes;
}

/** Uses up one code: true for exactly one caller, whichever pod it is on. */
export async function consumeRecoveryCode(db: Kysely<Database>, userId: number, code: string, now: number): Promise<boolean> {
  const normalised = normaliseRecoveryCode(code);
  if (normalised.length === 0 || normalised.length > 32) return false;
  const result = await db
    .updateTable('user_recovery_codes')
    .set({ used_at: now })
    .where('user_id', '=', userId)
    .where('code_hash', '=', sha256(normalised))
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function recoveryCodesLeft(db: Kysely<Database>, userId: number): Promise<number> {
  const row = await db
    .selectFrom('user_recovery_codes')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
