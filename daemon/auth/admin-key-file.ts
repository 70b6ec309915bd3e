import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Kysely, Transaction } from 'kysely';
import writeFileAtomic from 'write-file-atomic';
import { ADMIN_KEY_FILE } from '../../src/config/paths.ts';
import type { Database } from '../store/schema.ts';
import type { ApiKeys } from './api-keys.ts';

/** `<data-dir>/admin-api-key`: the ADMIN key that `monctl` on the daemon's host uses without a login. */
export const adminKeyFile = (dataDir: string) => join(dataDir, ADMIN_KEY_FILE);

/**
 * Creates an ADMIN key for `user` and writes it to the key file, atomically
 * (a temp file, then rename) with mode 0600: a reader sees the old key or the
 * new one, never half of one. Called inside the caller's transaction, so a
 * failed write leaves the database as it was. Bootstrap and reset-admin both
 * issue the file's key here. `owner`: who the file belongs to (reset-admin run
 * by root gives it to the daemon's user).
 */
export async function issueAdminKeyFile(
  trx: Transaction<Database>,
  keys: ApiKeys,
  user: { id: number; username: string },
  name: string,
  file: string,
  owner?: { uid: number; gid: number },
): Promise<number> {
  const key = await trx
    .insertInto('api_keys')
    .values({
      name,
      role: 'ADMIN',
      created_by: user.username,
      created_by_user_id: user.id,
      created_at: Date.now(),
      expires_at: null,
      last_used_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await writeFileAtomic(file, `${await keys.sign(key)}\n`, { mode: 0o600, fsync: true, ...(owner ? { chown: owner } : {}) });
  return key.id;
}

/** The key id the token in `file` names, or undefined when the file is missing, unreadable or not one of our keys. */
export async function keyIdInFile(keys: ApiKeys, file: string): Promise<number | undefined> {
  let token: string;
  try {
    token = (await readFile(file, 'utf8')).trim();
  } catch {
    return undefined;
  }
  return keys.idOf(token);
}

/**
 * The key in the key file and the user who owns it, read now: reset-admin may
 * rewrite the file while the daemon runs. Undefined means nothing to protect.
 */
export async function adminKeyHolder(db: Kysely<Database>, keys: ApiKeys, dataDir: string) {
  const file = adminKeyFile(dataDir);
  const keyId = await keyIdInFile(keys, file);
  if (keyId === undefined) return undefined;
  const row = await db.selectFrom('api_keys').select(['id', 'created_by_user_id']).where('id', '=', keyId).executeTakeFirst();
  return row ? { file, keyId: row.id, userId: row.created_by_user_id } : undefined;
}
