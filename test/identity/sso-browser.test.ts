import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openChromiumInTemp, type TestBrowser } from '../helpers/browser.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { startOidcProvider, type TestOidcProvider } from '../helpers/oidc-provider.ts';

const SECRET = 'monctl-test-client-secret-0123456789';

/** Chromium signs in at the daemon through the OpenID provider: its login page, its consent, the daemon's callback. */
describe('single sign-on in Chromium', () => {
  let provider: TestOidcProvider;
  let d: TestDaemon;
  let browser: TestBrowser;
  beforeAll(async () => {
    provider = await startOidcProvider({ clientSecret: SECRET });
    d = await startDaemon({
      args: ['--oidc-issuer', provider.issuer, '--oidc-client-id', 'monctl', '--oidc-scopes', 'openid,email,profile,groups'],
      env: { MONCTL_OIDC_CLIENT_SECRET: SECRET, MONCTL_OIDC_ROLES: 'monctl-admins=ADMIN', MONCTL_OIDC_NAME: 'Example ID' },
    });
    provider.allowRedirect(`${d.url}/login/sso/callback`);
    browser = await openChromiumInTemp();
  });
  afterAll(async () => {
    await browser?.close();
    await d?.stop();
    await provider?.stop();
  });

  // Chromium on a busy 2-core machine: generous bounds, no timing is asserted.
  const LONG = { timeout: 90_000 };

  it('login page → "Sign in with Example ID" → provider login → consent → the API explorer, logged in with a Lax HttpOnly session', {
    timeout: 180_000,
  }, async () => {
    const page = await browser.context.newPage();
    /** Every document the tab loaded or was redirected through, with its status. */
    const chain: Array<{ url: string; status: number; location?: string }> = [];
    page.on('response', (res) => {
      if (res.request().isNavigationRequest() && res.request().frame() === page.mainFrame())
        chain.push({ url: res.url(), status: res.status(), location: res.headers().location });
    });
    try {
      await page.goto(`${d.url}/login`, LONG);
      expect(await page.textContent('#sso')).toBe('Sign in with Example ID');
      await page.click('#sso');

      await page.waitForSelector('input[name="login"]', LONG);
      expect(new URL(page.url()).origin).toBe(provider.issuer);
      await page.fill('input[name="login"]', 'alice');
      await page.fill('input[name="password"]', 'any password');
      await page.click('button[type="submit"]');

      await page.waitForSelector('input[name="prompt"][value="consent"]', { state: 'attached', ...LONG });
      expect(await page.textContent('body')).toMatch(/Authorize|Continue/);
      await page.click('button[type="submit"]');

      await page.waitForURL(`${d.url}/api`, LONG);
      await page.waitForSelector('#monctl-who', LONG);
      expect(await page.textContent('#monctl-who')).toBe('Logged in as alice@example.com (ADMIN)');

      // The redirect chain: the daemon to the provider's authorization endpoint, the provider back to the callback, the callback to /api.
      const begin = chain.find((c) => c.url === `${d.url}/login/sso`);
      expect(begin).toMatchObject({ status: 302 });
      const auth = new URL(begin!.location!);
      expect(auth.origin).toBe(provider.issuer);
      expect(auth.searchParams.get('redirect_uri')).toBe(`${d.url}/login/sso/callback`);
      expect(auth.searchParams.get('code_challenge_method')).toBe('S256');
      expect(auth.searchParams.get('state')).toBeTruthy();
      expect(auth.searchParams.get('nonce')).toBeTruthy();
      const callback = chain.find((c) => c.url.startsWith(`${d.url}/login/sso/callback?`));
      expect(callback).toMatchObject({ status: 302, location: '/api' });
      expect(new URL(callback!.url).searchParams.get('state')).toBe(auth.searchParams.get('state'));
      expect(chain.some((c) => c.url.startsWith(`${provider.issuer}/interaction/`) && c.status === 200)).toBe(true);
      expect(chain.at(-1)).toMatchObject({ url: `${d.url}/api`, status: 200 });

      const cookies = await browser.context.cookies(d.url);
      const session = cookies.find((c) => c.name === 'JSESSIONID');
      expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
      expect(cookies.filter((c) => c.name.startsWith('monctl_sso_'))).toEqual([]);

      const me = await page.evaluate(async () => (await fetch('/api/me')).json());
      expect(me).toMatchObject({ username: 'alice@example.com', role: 'ADMIN', via: 'session', login: 'sso', sso: true });
      expect(browser.offLoopback).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
