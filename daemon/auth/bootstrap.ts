import { randomBytes } from 'node:crypto';
import type { DaemonContext } from '../context.ts';
import { adminKeyFile, issueAdminKeyFile } from './admin-key-file.ts';
import { hashPassword } from './passwords.ts';

/** A random password for user admin (bootstrap and reset-admin): 24 URL-safe characters. */
export const randomPassword = () => randomBytes(18).toString('base64url');

/**
 * First start on an empty database (README.md#first-start-logging-in-the-api-explorer): user `admin` with the
 * adminPassword setting (MONCTL_ADMIN_PASSWORD) or a random password printed
 * once on stderr, and an ADMIN key `bootstrap` written to
 * `<data-dir>/admin-api-key` (0600). The key file is written inside the
 * transaction, so a crash before commit simply bootstraps again on the next start.
 */
export async function bootstrap(ctx: DaemonContext, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const existing = await ctx.db.selectFrom('users').select('id').limit(1).executeTakeFirst();
  if (existing) return;
  // The config has it when the daemon was started by `monctl daemon`; a daemon started in-process may only have the env.
  const given = ctx.config.adminPassword ?? (env.MONCTL_ADMIN_PASSWORD || undefined);
  if (given !== undefined && given.length < 12) {
    throw new Error('MONCTL_ADMIN_PASSWORD must be at least 12 characters');
  }
  const password = given ?? randomPassword();
  const passwordHash = await hashPassword(password);
  const now = Date.now();
  const file = adminKeyFile(ctx.config.dataDir);
  await ctx.db.transaction().execute(async (trx) => {
    const user = await trx
      .insertInto('users')
      .values({
        username: 'admin',
        password_hash: passwordHash,
        role: 'ADMIN',
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await issueAdminKeyFile(trx, ctx.keys, user, 'bootstrap', file);
  });
  if (given === undefined) {
    process.stderr.write(`monctl: created user "admin" with password ${password} (shown once; change it with monctl users update)\n`);
  }
  ctx.log.info({ keyFile: file }, 'bootstrap: created user admin and the bootstrap API key');
}
