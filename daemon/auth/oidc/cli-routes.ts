import { createHash, randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { HttpError, invalidField } from '../../../src/errors.ts';
import type { DaemonContext } from '../../context.ts';
import type { Handlers } from '../../http/bind.ts';
import type { RouterLike } from '../../http/router-like.ts';
import { boxFor } from '../secret-box.ts';
import { callbackUrl } from './callback-url.ts';
import { createCliKey } from './cli-key.ts';
import { pollDevice, ssoOff, startDevice } from './device-grant.ts';
import { beginSignIn, clearTransactionCookie, type SignInTransaction, transactionCookie } from './flow.ts';
import type { SsoUser } from './users.ts';

/** A hand-off code must be exchanged within this time. */
const HANDOFF_TTL_MS = 2 * 60_000;
const PORT = /^\d{4,5}$/;
const STATE = /^[A-Za-z0-9_-]{16,128}$/;

const hashOf = (code: string) => createHash('sha256').update(code).digest('hex');

function loopbackOf(extra: Record<string, string>): { port: number; state: string } | undefined {
  const port = Number(extra.port);
  if (!PORT.test(extra.port ?? '') || port < 1024 || port > 65535 || !STATE.test(extra.state ?? '')) return undefined;
  return { port, state: extra.state! };
}

/** Handlers of `monctl login --sso` (docs/API.md#cli-single-sign-on): the device grant and the loopback hand-off. */
export const cliSsoHandlers: Handlers = {
  startSsoDevice: ({ ctx }) => startDevice(ctx),
  pollSsoDevice: ({ ctx, body }) => pollDevice(ctx, body),

  async redeemSsoHandoff({ ctx, body }) {
    ssoOff(ctx);
    const now = ctx.clock.now();
    // Deleting is the consumption: of two requests with one code, one gets the row.
    const row = await ctx.db
      .deleteFrom('sso_handoffs')
      .where('code_hash', '=', hashOf(body.code))
      .returning(['user_id', 'expires_at'])
      .executeTakeFirst();
    if (!row || row.expires_at < now)
      throw new HttpError(400, 'sso-handoff', 'this sign-in code is unknown, used or expired: run monctl login --sso again');
    const user = await ctx.db.selectFrom('users').select(['id', 'username', 'role']).where('id', '=', row.user_id).executeTakeFirst();
    if (!user) throw new HttpError(400, 'sso-handoff', 'the user of this sign-in code no longer exists');
    return createCliKey(ctx, { id: user.id, username: user.username, role: user.role as SsoUser['role'], roleChanged: false }, body.host);
  },
};

/** `GET /login/sso/cli?port=&state=`: the browser's start of a loopback sign-in of `monctl login --sso`. */
export function cliSsoRoutes(ctx: DaemonContext) {
  return (router: RouterLike) => {
    router.get('/login/sso/cli', async (req, res) => {
      const issuer = ssoOff(ctx);
      const query = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
      const port = query.get('port') ?? '';
      const state = query.get('state') ?? '';
      if (!loopbackOf({ port, state })) {
        throw PORT.test(port) && Number(port) >= 1024 && Number(port) <= 65535
          ? invalidField('state', 'must be 16 to 128 letters, digits, _ or -')
          : invalidField('port', 'must be a port number from 1024 to 65535');
      }
      const { url, tx, sealed } = await beginSignIn(issuer, boxFor(ctx.installSecret, 'sso-transactions'), {
        purpose: 'cli',
        redirectUri: callbackUrl(req, ctx.config),
        returnTo: '/',
        extra: { port, state },
      });
      const secure = tx.redirectUri.startsWith('https:');
      res.writeHead(302, { Location: url, 'Cache-Control': 'no-store', 'Set-Cookie': transactionCookie(tx, sealed, secure) }).end();
    });
  };
}

/**
 * The end of a loopback sign-in of `monctl login --sso` (a transaction with purpose `cli`), called by the
 * daemon's SSO callback (login-routes.ts, which ends open streams on a role change) once the user is
 * signed in: a one-time code, stored hashed for 2 minutes, goes to the CLI's loopback port, where the
 * CLI exchanges it (POST /api/auth/sso/handoff). The transaction's cookie is cleared: it was used.
 */
export async function finishCliSignIn(ctx: DaemonContext, tx: SignInTransaction, user: SsoUser, res: ServerResponse): Promise<void> {
  const loopback = loopbackOf(tx.extra);
  if (!loopback) throw new HttpError(400, 'sso-transaction', 'the sign-in under way names no loopback port of the CLI');
  const now = ctx.clock.now();
  const code = randomBytes(32).toString('base64url');
  await ctx.db.deleteFrom('sso_handoffs').where('expires_at', '<', now).execute();
  await ctx.db
    .insertInto('sso_handoffs')
    .values({ code_hash: hashOf(code), user_id: user.id, created_at: now, expires_at: now + HANDOFF_TTL_MS })
    .execute();
  const target = new URL(`http://127.0.0.1:${loopback.port}/callback`);
  target.searchParams.set('code', code);
  target.searchParams.set('state', loopback.state);
  res.writeHead(302, { Location: target.href, 'Cache-Control': 'no-store', 'Set-Cookie': clearTransactionCookie(tx) }).end();
}
