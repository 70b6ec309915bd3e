import type { ServerResponse } from 'node:http';
import { loadInstallSecret } from '../../daemon/auth/install-secret.ts';
import { finishCliSignIn } from '../../daemon/auth/oidc/cli-routes.ts';
import { completeSignIn } from '../../daemon/auth/oidc/flow.ts';
import { OidcIssuer } from '../../daemon/auth/oidc/issuer.ts';
import { signInUser } from '../../daemon/auth/oidc/users.ts';
import { boxFor } from '../../daemon/auth/secret-box.ts';
import type { OidcConfig } from '../../daemon/config.ts';
import type { DaemonContext } from '../../daemon/context.ts';
import { createLogger } from '../../daemon/logger.ts';
import { openStore } from '../../daemon/store/store.ts';
import { systemClock } from '../../daemon/util/clock.ts';
import type { TestDaemon } from '../helpers/daemon.ts';
import { type CookieJar, send } from '../helpers/http.ts';

/**
 * The daemon's SSO callback for a loopback sign-in of `monctl login --sso`:
 * GET it with the browser's cookies and return where it sends the browser
 * (the CLI's loopback URL). While the daemon has no `/login/sso/callback`
 * route (404), the same steps run here, on the daemon's own database and
 * install secret: completeSignIn, signInUser, then the daemon's
 * finishCliSignIn, whose redirect is returned.
 */
export async function callbackHop(d: TestDaemon, callback: string, jar: CookieJar): Promise<string> {
  const url = new URL(callback);
  const res = await send(d.url, 'GET', url.pathname + url.search, { headers: jar.header() });
  if (res.status === 302) return String(res.headers.location);
  if (res.status !== 404) throw new Error(`the daemon's callback answered ${res.status}: ${res.text}`);
  const issuerUrl = d.proc.spawnargs[d.proc.spawnargs.indexOf('--oidc-issuer') + 1]!;
  const settings: OidcConfig = {
    issuer: issuerUrl,
    clientId: 'monctl',
    clientSecret: 'monctl-test-client-secret-0123456789',
    name: 'test',
    scopes: ['openid', 'email', 'profile', 'groups'],
    users: 'create',
    usernameClaim: 'email',
    groupsClaim: 'groups',
    roles: [{ group: 'monctl-admins', role: 'ADMIN' }],
    defaultRole: 'USER',
  };
  const store = await openStore(d.dataDir, d.databaseUrl);
  try {
    const box = boxFor(await loadInstallSecret(store.db), 'sso-transactions');
    const { identity, tx } = await completeSignIn(new OidcIssuer(settings, createLogger('silent')), box, {
      url,
      cookie: (name) => jar.cookies.get(name),
      purposes: ['login', 'cli'],
      redirectUri: `${d.url}/login/sso/callback`,
    });
    const user = await signInUser(store.db, settings, identity);
    let location = '';
    const answer = {
      writeHead(status: number, headers: Record<string, string>) {
        if (status !== 302) throw new Error(`finishCliSignIn answered ${status}`);
        location = headers.Location!;
        return answer;
      },
      end: () => answer,
    };
    // The daemon's clock is its own (--test-clock): the hand-off expiry is judged by the daemon at the exchange.
    const ctx = { db: store.db, clock: systemClock, streams: { changed() {} } } as unknown as DaemonContext;
    await finishCliSignIn(ctx, tx, user, answer as unknown as ServerResponse);
    return location;
  } finally {
    await store.close();
  }
}
