import { chownSync, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ExitCode, MonctlError } from '../../src/errors.ts';
import { openStore } from '../store/store.ts';
import { adminKeyFile, issueAdminKeyFile, keyIdInFile } from './admin-key-file.ts';
import { ApiKeys } from './api-keys.ts';
import { randomPassword } from './bootstrap.ts';
import { loadInstallSecret } from './install-secret.ts';
import { hashPassword } from './passwords.ts';
import { clearFactor } from './two-factor/factor.ts';

export interface ResetOutcome {
  /** The random password, when none was given: the caller prints it once. */
  generated?: string;
  keyFile: string;
  keyId: number;
  /** The key the file held before, now revoked. */
  revokedKeyId?: number;
  user: 'created' | 'updated';
}

/**
 * `monctl daemon reset-admin`: on the daemon's host, with the daemon running or
 * not. Opens the SQLite database directly (WAL and the busy timeout let it
 * share the file with a running daemon; nothing is locked beyond one short
 * write transaction). User `admin` gets the new password and role ADMIN
 * (recreated if it was deleted) and loses its sessions; the key the key file
 * held is revoked and a new ADMIN key takes its place in the file. The daemon
 * needs no restart: it reads users and keys from the database on every request.
 */
export async function resetAdmin(dataDir: string, given: string | undefined): Promise<ResetOutcome> {
  const dbFile = join(dataDir, 'monctl.db');
  if (!existsSync(dbFile)) {
    throw new MonctlError(
      'not-found',
      `no database at ${dbFile}: give the daemon's data dir with --data-dir, MONCTL_DATA_DIR or dataDir in --config`,
      ExitCode.notFound,
    );
  }
  // Run as root on a service's data dir, files written here must stay the daemon user's.
  const owner = process.getuid?.() === 0 ? { uid: statSync(dbFile).uid, gid: statSync(dbFile).gid } : undefined;
  const password = given ?? randomPassword();
  const passwordHash = await hashPassword(password);
  const store = await openStore(dataDir);
  try {
    const keys = new ApiKeys(store.db, await loadInstallSecret(store.db));
    const file = adminKeyFile(dataDir);
    const oldKeyId = await keyIdInFile(keys, file);
    const now = Date.now();
    const outcome = await store.db.transaction().execute(async (trx) => {
      const existing = await trx.selectFrom('users').select(['id', 'username']).where('username', '=', 'admin').executeTakeFirst();
      const user = existing
        ? await trx
            .updateTable('users')
            .set({ password_hash: passwordHash, role: 'ADMIN', updated_at: now })
            .where('id', '=', existing.id)
            .returning(['id', 'username'])
            .executeTakeFirstOrThrow()
        : await trx
            .insertInto('users')
            .values({ username: 'admin', password_hash: passwordHash, role: 'ADMIN', created_at: now, updated_at: now })
            .returning(['id', 'username'])
            .executeTakeFirstOrThrow();
      // A new password ends the user's sessions, as `monctl users update` does.
      await trx.deleteFrom('sessions').where('user_id', '=', user.id).execute();
      // A lost phone is one reason to be here: the second factor goes too (enrol again after logging in).
      await clearFactor(trx, user.id);
      const revoked =
        oldKeyId === undefined
          ? undefined
          : Number((await trx.deleteFrom('api_keys').where('id', '=', oldKeyId).executeTakeFirst()).numDeletedRows) > 0
            ? oldKeyId
            : undefined;
      const keyId = await issueAdminKeyFile(trx, keys, user, `admin-api-key ${new Date(now).toISOString()}`, file, owner);
      return { keyFile: file, keyId, revokedKeyId: revoked, user: existing ? ('updated' as const) : ('created' as const) };
    });
    return { ...outcome, generated: given === undefined ? password : undefined };
  } finally {
    await store.close();
    if (owner) giveBack(dbFile, owner);
  }
}

/** The WAL files SQLite may have created as root while the daemon was stopped. */
function giveBack(dbFile: string, owner: { uid: number; gid: number }) {
  for (const file of [dbFile, `${dbFile}-wal`, `${dbFile}-shm`]) {
    try {
      chownSync(file, owner.uid, owner.gid);
    } catch {
      // gone already (SQLite removes them when the last connection closes)
    }
  }
}
