import { badRequest, conflict, HttpError, invalidField, notFound } from '../../../src/errors.ts';
import type { DaemonContext } from '../../context.ts';
import type { HandlersOf } from '../../http/bind.ts';
import type { Principal } from '../principal.ts';
import { toUser } from '../mappers.ts';
import { boxFor } from '../secret-box.ts';
import type { twoFactorOperations } from '../../../src/api/ops/two-factor.ts';
import { clearFactor, enableFactor, type Factor, factorRequired, loadFactor, storePendingSecret } from './factor.ts';
import { issueRecoveryCodes, recoveryCodesLeft } from './recovery-codes.ts';
import { enrolment, newSecret } from './totp.ts';
import { checkCode } from './verify.ts';

const secrets = (ctx: DaemonContext) => boxFor(ctx.installSecret, 'totp-secrets');

/** The caller's user row: sessions and API keys alike act for their user. */
async function caller(ctx: DaemonContext, principal: Principal): Promise<Factor> {
  if (principal.kind !== 'user') throw new Error('unreachable: two-factor operations need authentication');
  const user = await loadFactor(ctx.db, secrets(ctx), { username: principal.username });
  if (!user) throw notFound('The user of this credential no longer exists');
  return user;
}

/** A wrong code is a 400 naming `code`, after it was counted (429 once too many are wrong). */
const wrongCode = () => invalidField('code', 'is not a current code of the authenticator app nor an unused recovery code');

/** The enabled factor's code check, for turning it off or renewing the recovery codes. */
async function proveFactor(ctx: DaemonContext, user: Factor, code: string): Promise<void> {
  if (!user.enabled || !user.secret) throw conflict('Two-factor login is not enabled for this user');
  const kind = await checkCode(ctx.db, user.id, code, { secret: user.secret, recovery: true });
  if (!kind) throw wrongCode();
}

async function status(ctx: DaemonContext, user: Factor) {
  const enabled = user.enabled;
  return {
    enabled,
    pending: !enabled && user.secret !== undefined,
    required: user.hasPassword && factorRequired(ctx.config, user.role),
    recoveryCodesLeft: enabled ? await recoveryCodesLeft(ctx.db, user.id) : 0,
    canEnrol: user.hasPassword,
  };
}

/** Handlers of enrolment, confirmation and reset of TOTP second factors (docs/API.md#two-factor-login). */
export const twoFactorHandlers: HandlersOf<typeof twoFactorOperations> = {
  async getTwoFactor({ ctx, principal }) {
    return status(ctx, await caller(ctx, principal));
  },

  async enrolTwoFactor({ ctx, principal }) {
    const user = await caller(ctx, principal);
    if (!user.hasPassword)
      throw badRequest('Users of single sign-on have no password here: their second factor is the provider’s', [
        { field: 'user', message: 'signs in with single sign-on' },
      ]);
    if (user.enabled) throw conflict('Two-factor login is enabled already: turn it off first to enrol again');
    const secret = newSecret();
    await storePendingSecret(ctx.db, secrets(ctx), user.id, secret);
    return enrolment(secret, user.username);
  },

  async confirmTwoFactor({ ctx, principal, body }) {
    const user = await caller(ctx, principal);
    if (user.enabled) throw conflict('Two-factor login is enabled already');
    if (!user.secret) throw conflict('No enrolment to confirm: start one with POST /api/me/two-factor');
    const codes = await enableFactor(ctx.db, secrets(ctx), user.id, user.secret, body.code);
    if (!codes) throw wrongCode();
    ctx.log.info({ username: user.username }, 'two-factor enabled');
    return { recoveryCodes: codes };
  },

  async disableTwoFactor({ ctx, principal, body }) {
    const user = await caller(ctx, principal);
    await proveFactor(ctx, user, body.code);
    await ctx.db.transaction().execute((trx) => clearFactor(trx, user.id));
    ctx.log.info({ username: user.username }, 'two-factor disabled');
    return status(ctx, { ...user, enabled: false, secret: undefined });
  },

  async renewRecoveryCodes({ ctx, principal, body }) {
    const user = await caller(ctx, principal);
    await proveFactor(ctx, user, body.code);
    const codes = await ctx.db.transaction().execute((trx) => issueRecoveryCodes(trx, user.id, Date.now()));
    ctx.log.info({ username: user.username }, 'recovery codes renewed');
    return { recoveryCodes: codes };
  },

  async resetTwoFactor({ ctx, params, principal }) {
    const user = await ctx.db.selectFrom('users').select(['id', 'username']).where('id', '=', params.id).executeTakeFirst();
    if (!user) throw notFound(`User ${params.id} does not exist`);
    await ctx.db.transaction().execute((trx) => clearFactor(trx, user.id));
    const by = principal.kind === 'user' ? principal.username : undefined;
    ctx.log.warn({ username: user.username, by }, 'two-factor reset by an admin');
    const row = await ctx.db.selectFrom('users').selectAll().where('id', '=', params.id).executeTakeFirst();
    if (!row) throw new HttpError(404, 'not-found', `User ${params.id} does not exist`);
    return toUser(row);
  },
};
