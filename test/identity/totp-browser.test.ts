import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Secret, TOTP } from 'otpauth';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openChromium, type TestBrowser } from '../helpers/browser.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { okJson } from '../helpers/http.ts';

const PASSWORD = 'a-long-password-1';
const LONG = { timeout: 90_000 };

/** Chromium through the second step: the enrolment page's inline QR code under the login CSP, then a code login. */
describe('two-factor login in Chromium', () => {
  let d: TestDaemon;
  let browser: TestBrowser;
  let profile: string;
  beforeAll(async () => {
    d = await startDaemon({ args: ['--two-factor-required', 'admin'] });
    await okJson(
      d.url,
      'POST',
      '/admin/api/users',
      { username: 'ines', password: PASSWORD, role: 'ADMIN' },
      { authorization: `Bearer ${d.adminKey}` },
    );
    profile = mkdtempSync(join(tmpdir(), 'monctl-totp-browser-'));
    browser = await openChromium(profile);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    await d?.stop();
  });

  async function password(page: Page): Promise<void> {
    await page.goto(`${d.url}/login`, LONG);
    await page.fill('#username', 'ines');
    await page.fill('#password', PASSWORD);
    await Promise.all([page.waitForURL(/\/login\/2fa$/, LONG), page.click('button[type=submit]')]);
  }

  it(
    'enrols at login: the QR code draws under the CSP, the code enables it, the recovery codes show once, then a code logs in',
    LONG,
    async () => {
      const page = await browser.context.newPage();
      const violations: string[] = [];
      page.on('console', (m) => {
        if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text());
      });
      await password(page);
      const box = await page.locator('.qr svg').boundingBox();
      expect(box?.width).toBeGreaterThan(100);
      expect(box?.height).toBeGreaterThan(100);
      const secret = (await page.locator('code').textContent())!.trim();
      expect(secret).toMatch(/^[A-Z2-7]{32}$/);
      // A step with 15 s left: the two codes below stay inside the daemon's ±1 window.
      const left = TOTP.remaining({ period: 30, timestamp: Date.now() });
      if (left < 15_000) await new Promise((r) => setTimeout(r, left + 50));
      const step = TOTP.counter({ period: 30, timestamp: Date.now() });
      const code = (s: number) => TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: s * 30_000 });

      await page.fill('#code', code(step));
      await Promise.all([page.waitForLoadState('load'), page.click('button[type=submit]')]);
      expect(await page.locator('ol li').count()).toBe(10);
      const cookies = await browser.context.cookies(d.url);
      const session = cookies.find((c) => c.name === 'JSESSIONID');
      expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax' });
      expect(cookies.some((c) => c.name === 'monctl_login_2fa')).toBe(false);
      const me = await (await browser.context.request.get(`${d.url}/api/me`)).json();
      expect(me).toMatchObject({ username: 'ines', login: 'password+totp', twoFactor: true });

      // Log out; the next login asks for the code, and the next step's code is taken.
      await browser.context.clearCookies();
      await password(page);
      expect(await page.locator('.qr').count()).toBe(0);
      await page.fill('#code', code(step + 1));
      await Promise.all([page.waitForURL(/\/api/, LONG), page.click('button[type=submit]')]);
      const again = await (await browser.context.request.get(`${d.url}/api/me`)).json();
      expect(again).toMatchObject({ username: 'ines', login: 'password+totp' });
      expect(violations).toEqual([]);
      expect(browser.offLoopback).toEqual([]);
      await page.close();
    },
  );
});
