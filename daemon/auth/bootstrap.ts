import { randomBytes } from 'node:crypto';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ADMIN_KEY_FILE } from '../../src/config/paths.ts';
import type { DaemonContext } from '../context.ts';
import { hashPassword } from './passwords.ts';

/**
 * First start on an empty database (CONTRACT section 1): user `admin` with
 * MONCTL_ADMIN_PASSWORD or a random password printed once on stderr, and an
 * ADMIN key `bootstrap` written to `<data-dir>/admin-api-key` (0600). The key
 * file is written inside the transaction, so a crash before commit simply
 * bootstraps again on the next start.
 */
export async function bootstrap(ctx: DaemonContext, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const existing = await ctx.db.selectFrom('users').select('id').limit(1).executeTakeFirst();
  if (existing) return;
  const given = env.MONCTL_ADMIN_PASSWORD;
  if (given !== undefined && given.length < 12) {
    throw new Error('MONCTL_ADMIN_PASSWORD must be at least 12 characters');
  }
  const password = given ?? randomBytes(18).toString('base64url');
  const passwordHash = await hashPassword(password);
  const now = Date.now();
  const file = join(ctx.config.dataDir, ADMIN_KEY_FILE);
  await ctx.db.transaction().execute(async (trx) => {
    const user = await trx.insertInto('users').values({
      username: 'admin', password_hash: passwordHash, role: 'ADMIN', created_at: now, updated_at: now,
    }).returningAll().executeTakeFirstOrThrow();
    const key = await trx.insertInto('api_keys').values({
      name: 'bootstrap', role: 'ADMIN', created_by: 'admin', created_by_user_id: user.id,
      created_at: now, expires_at: null, last_used_at: null,
    }).returningAll().executeTakeFirstOrThrow();
    writeFileSync(file, `${await ctx.keys.sign(key)}\n`, { mode: 0o600 });
    chmodSync(file, 0o600);
  });
  if (given === undefined) {
    process.stderr.write(`monctl: created user "admin" with password ${password} (shown once; change it with monctl users update)\n`);
  }
  ctx.log.info({ keyFile: file }, 'bootstrap: created user admin and the bootstrap API key');
}
