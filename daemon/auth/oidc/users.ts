import type { Kysely } from 'kysely';
import type { Role } from '../../../src/api/schemas/auth.ts';
import { HttpError } from '../../../src/errors.ts';
import type { OidcConfig } from '../../config.ts';
import type { Database } from '../../store/schema.ts';
import { type Identity, roleOf } from './identity.ts';

/** The user an SSO sign-in logged in as. `roleChanged`: the caller ends open streams (ctx.streams.changed()). */
export interface SsoUser {
  id: number;
  username: string;
  role: Role;
  roleChanged: boolean;
}

const USERNAME = /^[A-Za-z0-9._@-]{1,64}$/;
const refuse = (code: string, detail: string) => new HttpError(403, code, detail);

/**
 * The user behind a verified identity, per the settings: the user linked
 * to this issuer and subject; else the user named by the username claim,
 * which is linked now (unless another account is linked to it already);
 * else, with `--oidc-users create`, a new user whose password is empty
 * (no password matches it). The role comes from the groups at every
 * sign-in, so a change at the provider applies at the next login; a role
 * that maps to nothing (`--oidc-default-role none`) is refused with 403.
 */
export async function signInUser(db: Kysely<Database>, settings: OidcConfig, identity: Identity, now = Date.now()): Promise<SsoUser> {
  const role = roleOf(settings, identity);
  if (!role) throw refuse('sso-no-role', `no group of yours maps to a role here (--oidc-roles), and --oidc-default-role is none`);
  let user = await db
    .selectFrom('users')
    .selectAll()
    .where('sso_issuer', '=', identity.issuer)
    .where('sso_subject', '=', identity.subject)
    .executeTakeFirst();
  if (!user) {
    const username = identity.username;
    if (!username)
      throw refuse(
        'sso-no-username',
        `the provider sent no usable ${settings.usernameClaim} claim${settings.usernameClaim === 'email' ? ' (a verified email)' : ''}`,
      );
    if (!USERNAME.test(username))
      throw refuse('sso-username', `"${username.slice(0, 64)}" cannot be a username here (letters, digits and . _ @ - only, at most 64)`);
    if (settings.users === 'create') {
      // Another pod may create the same user at the same moment: the unique username decides, and both read the row back.
      await db
        .insertInto('users')
        .values({ username, password_hash: '', role, created_at: now, updated_at: now })
        .onConflict((oc) => oc.column('username').doNothing())
        .execute();
    }
    const named = await db.selectFrom('users').selectAll().where('username', '=', username).executeTakeFirst();
    if (!named)
      throw refuse('sso-no-user', `there is no user ${username} here, and only existing users may sign in (--oidc-users existing)`);
    if (named.sso_subject !== null && (named.sso_issuer !== identity.issuer || named.sso_subject !== identity.subject))
      throw refuse('sso-taken', `user ${username} is linked to another account of the provider`);
    await db
      .updateTable('users')
      .set({ sso_issuer: identity.issuer, sso_subject: identity.subject })
      .where('id', '=', named.id)
      .where('sso_subject', 'is', null)
      .execute();
    user = named;
  }
  const roleChanged = user.role !== role;
  await db
    .updateTable('users')
    .set({ last_login_method: 'sso', ...(roleChanged ? { role, updated_at: now } : {}) })
    .where('id', '=', user.id)
    .execute();
  return { id: user.id, username: user.username, role, roleChanged };
}
