import { createHash, createPublicKey } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { openChromium, type TestBrowser } from '../helpers/browser.ts';
import { startOidcProvider, type TestOidcProvider } from '../helpers/oidc-provider.ts';
import { makePki, type TestPki } from '../helpers/tls.ts';
import { startTunnel, type Tunnel } from '../tunnel/helpers.ts';
import { echoTarget, ssoArgs, ssoEnv } from './route-sso-world.ts';

const LONG = { timeout: 60_000 };

/**
 * A route behind sign-in in Chromium: the visit is sent to the provider, its login and
 * consent pages are filled in, the callback on the route's hostname sets the cookie and
 * brings the browser back to the page, whose target sees who signed in. `app.localhost`
 * resolves to loopback in Chromium. On the HTTPS edge Chromium trusts the test certificate's
 * key (--ignore-certificate-errors-spki-list: a profile cannot be given a CA of its own).
 */
describe('identity: route sign-in in Chromium', () => {
  let provider: TestOidcProvider;
  let tunnel: Tunnel;
  let target: Awaited<ReturnType<typeof echoTarget>>;
  let browser: TestBrowser;
  let profile: string;
  let origin: string;
  let secureOrigin: string;
  let pki: TestPki;

  beforeAll(async () => {
    provider = await startOidcProvider();
    target = await echoTarget();
    tunnel = await startTunnel([], [...ssoArgs(provider.issuer), '--edge-tls-listen', '127.0.0.1:0'], ssoEnv(provider.client.clientSecret));
    origin = `http://app.localhost:${new URL(tunnel.daemon.edgeUrl).port}`;
    secureOrigin = `https://app.localhost:${new URL(tunnel.daemon.edgeTlsUrl!).port}`;
    pki = makePki('route sso browser CA');
    const pair = pki.issueNames('app', 41, ['app.localhost']);
    await tunnel.daemon.admin.call(operations.uploadCertificate, { body: { certificate: pair.cert + pki.ca, privateKey: pair.key } });
    const spki = createHash('sha256')
      .update(createPublicKey(pair.cert).export({ type: 'spki', format: 'der' }))
      .digest('base64');
    const id = await tunnel.httpRoute('app', target.url, 'app.localhost');
    await tunnel.daemon.admin.call(operations.updateRoute, { params: { id }, body: { auth: 'oidc', sso: { groups: ['ops'] } } });
    provider.allowRedirect(`${origin}/.monctl/sso/callback`);
    provider.allowRedirect(`${secureOrigin}/.monctl/sso/callback`);
    profile = mkdtempSync(join(tmpdir(), 'monctl-chromium-'));
    browser = await openChromium(profile, [`--ignore-certificate-errors-spki-list=${spki}`]);
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    await tunnel?.close();
    await target?.close();
    await provider?.stop();
    pki?.cleanup();
  });

  it('visits the route, signs in at the provider with consent, and comes back to the target with the cookie and the identity', {
    timeout: 120_000,
  }, async () => {
    const page = await browser.context.newPage();
    // Every hop, redirects included (the browser's routes see only the first request of a chain).
    const hops: string[] = [];
    page.on('request', (r) => hops.push(r.url()));
    await page.goto(`${origin}/dashboard?tab=1`, LONG);
    // The edge sent the browser to the provider's login page.
    expect(new URL(page.url()).origin).toBe(provider.issuer);
    await page.locator('input[name=login]').fill('alice', LONG);
    await page.locator('input[name=password]').fill('any password', LONG);
    await page.locator('button[type=submit]').click(LONG);
    // Consent: the provider asks before it hands the claims to monctl.
    await page.waitForURL((url) => url.pathname.includes('/interaction/'), LONG);
    expect(await page.content()).toMatch(/authorize|consent|continue/i);
    await page.locator('button[type=submit]').click(LONG);
    await page.waitForURL((url) => url.origin === origin && url.pathname === '/dashboard', LONG);
    expect(page.url()).toBe(`${origin}/dashboard?tab=1`);
    // Through the callback on the route's own hostname, with the code and state.
    const callback = hops.find((u) => u.startsWith(`${origin}/.monctl/sso/callback?`));
    expect(new URL(callback!).searchParams.get('state')).toBeTruthy();
    expect(browser.offLoopback).toEqual([]);

    const seen = JSON.parse(await page.locator('body').innerText()) as { url: string; headers: Record<string, string> };
    expect(seen.url).toBe('/dashboard?tab=1');
    expect(seen.headers['x-auth-request-email']).toBe('alice@example.com');
    expect(seen.headers['x-auth-request-user']).toBe('alice');
    expect(seen.headers['x-auth-request-groups']).toBe('monctl-admins,ops');
    expect(seen.headers.cookie).toBeUndefined();

    const cookies = await browser.context.cookies(origin);
    const session = cookies.find((c) => c.name === 'monctl_route_sso');
    expect(session).toMatchObject({ domain: 'app.localhost', path: '/', httpOnly: true, sameSite: 'Lax', secure: false });
    // Scripts cannot read it.
    expect(await page.evaluate('document.cookie')).not.toContain('monctl_route_sso');

    await page.goto(`${origin}/.monctl/sso/logout`, LONG);
    expect((await browser.context.cookies(origin)).some((c) => c.name === 'monctl_route_sso')).toBe(false);
    expect(await page.locator('h1').innerText()).toBe('Signed out');
    await page.close();
  });

  it('on the HTTPS edge the session cookie is __Host- with Secure', { timeout: 120_000 }, async () => {
    const page = await browser.context.newPage();
    await page.goto(`${secureOrigin}/secure`, LONG);
    // The provider remembers alice and her consent: straight back, or through its pages again.
    if (new URL(page.url()).origin === provider.issuer) {
      if (await page.locator('input[name=login]').count()) {
        await page.locator('input[name=login]').fill('alice', LONG);
        await page.locator('input[name=password]').fill('any password', LONG);
        await page.locator('button[type=submit]').click(LONG);
      }
      await page.waitForURL((url) => url.origin === secureOrigin || url.pathname.includes('/interaction/'), LONG);
      if (new URL(page.url()).origin !== secureOrigin) await page.locator('button[type=submit]').click(LONG);
    }
    await page.waitForURL((url) => url.origin === secureOrigin && url.pathname === '/secure', LONG);
    const seen = JSON.parse(await page.locator('body').innerText()) as { headers: Record<string, string> };
    expect(seen.headers['x-auth-request-email']).toBe('alice@example.com');
    expect(seen.headers['x-forwarded-proto']).toBe('https');
    const session = (await browser.context.cookies(secureOrigin)).find((c) => c.name === '__Host-monctl_route_sso');
    expect(session).toMatchObject({ domain: 'app.localhost', path: '/', httpOnly: true, sameSite: 'Lax', secure: true });
    await page.close();
  });
});
