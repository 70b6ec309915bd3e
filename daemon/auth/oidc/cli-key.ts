import { randomBytes } from 'node:crypto';
import type { DaemonContext } from '../../context.ts';
import { insertApiKey } from '../keys.ts';
import type { SsoUser } from './users.ts';

/** What `monctl login --sso` gets at the end of either way of signing in. */
export interface CliLogin {
  status: 'complete';
  token: string;
  keyId: number;
  username: string;
  role: SsoUser['role'];
}

/**
 * The API key `monctl login --sso` saves in its context: named as the
 * password login names its key (`monctl <user>@<host> <date>`), with the
 * user's role, created by the user (so deleting or demoting them caps it).
 */
export async function createCliKey(ctx: DaemonContext, user: SsoUser, host: string | undefined, now = Date.now()): Promise<CliLogin> {
  if (user.roleChanged) ctx.streams.changed();
  // At most 98 characters with the suffix below: within what `monctl keys` and the API take as a key name.
  const who = `${user.username}@${host ?? 'sso'}`.slice(0, 64);
  const base = `monctl ${who} ${new Date(now).toISOString().slice(0, 19)}`;
  const row = await ctx.db.transaction().execute(async (trx) => {
    const taken = await trx.selectFrom('api_keys').select('id').where('name', '=', base).executeTakeFirst();
    // Two logins within one second from one host: the second key's name gets a suffix rather than a 409.
    const name = taken ? `${base} ${randomBytes(3).toString('hex')}` : base;
    return insertApiKey(trx, { name, role: user.role, createdBy: user.username, creatorId: user.id, routeIds: null, expiresAt: null, now });
  });
  ctx.log.info({ username: user.username, keyId: row.id }, 'CLI signed in with SSO');
  return { status: 'complete', token: await ctx.keys.sign(row), keyId: row.id, username: user.username, role: user.role };
}
