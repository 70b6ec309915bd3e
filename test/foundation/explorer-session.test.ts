import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { openChromium, type TestBrowser } from '../helpers/browser.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { send } from '../helpers/http.ts';

/**
 * Walkthrough finding (issue 13): the explorer's Authorize dialog asked for
 * the HttpOnly JSESSIONID, showed nobody as logged in and offered no logout,
 * and a 401 did not say where to log in. Headless Chromium against /api.
 */
describe('API explorer and the session', () => {
  let d: TestDaemon;
  let browser: TestBrowser;
  let profile: string;
  beforeAll(async () => {
    d = await startDaemon();
    await d.admin.call(operations.createUser, { body: { username: 'alice', password: 'alice-password-1', role: 'USER' } });
    profile = mkdtempSync(join(tmpdir(), 'monctl-chromium-'));
    browser = await openChromium(profile);
  });
  afterAll(async () => {
    await browser?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    await d?.stop();
  });

  // Chromium on a busy 2-core machine: generous bounds, no timing is asserted.
  const LONG = { timeout: 90_000 };

  async function openExplorer(page: Page): Promise<void> {
    await page.goto(`${d.url}/api`, LONG);
    await page.waitForSelector('#operations-Session-me', LONG);
  }

  /** Runs GET /api/me with "Try it out" and returns the status Swagger UI shows. */
  async function tryMe(page: Page): Promise<string> {
    await page.click('#operations-Session-me .opblock-summary');
    await page.click('#operations-Session-me .try-out__btn');
    await page.click('#operations-Session-me .execute');
    const cell = page.locator('#operations-Session-me .live-responses-table .response .response-col_status').first();
    await cell.waitFor(LONG);
    const status = (await cell.textContent())!.trim();
    await page.click('#operations-Session-me .opblock-summary'); // collapse again
    return status;
  }

  it('anonymous: "Not logged in · Log in", an Authorize dialog without JSESSIONID, and a 401 that links to /login', {
    timeout: 180_000,
  }, async () => {
    const page = await browser.context.newPage();
    try {
      await openExplorer(page);
      expect(await page.textContent('#monctl-session')).toMatch(/^Not logged in · Log in/);
      expect(await page.getAttribute('#monctl-login', 'href')).toBe('/login');
      expect(await page.isVisible('#monctl-auth-notice')).toBe(false);

      await page.click('.auth-wrapper .authorize');
      const dialog = page.locator('.modal-ux');
      await dialog.waitFor(LONG);
      const text = (await dialog.textContent()) ?? '';
      expect(text).toContain('apiKeyBearer');
      expect(text).toContain('X-API-KEY');
      expect(text).not.toMatch(/JSESSIONID|session \(apiKey\)/);
      await page.click('.modal-ux .close-modal');

      expect(await tryMe(page)).toBe('401');
      const notice = page.locator('#monctl-auth-notice');
      await notice.waitFor({ state: 'visible', ...LONG });
      expect(await notice.locator('a').getAttribute('href')).toBe('/login');
      expect(browser.offLoopback).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('logged in: "Logged in as alice (USER) · Log out", calls use the session, and Log out ends it', { timeout: 180_000 }, async () => {
    const page = await browser.context.newPage();
    try {
      await page.goto(`${d.url}/login`, LONG);
      await page.fill('#username', 'alice');
      await page.fill('#password', 'alice-password-1');
      await Promise.all([page.waitForURL(`${d.url}/api`, LONG), page.click('button[type=submit]')]);
      await page.waitForSelector('#operations-Session-me', LONG);
      expect(await page.textContent('#monctl-session')).toMatch(/^Logged in as alice \(USER\) · Log out/);
      expect(await tryMe(page)).toBe('200');
      expect(await page.isVisible('#monctl-auth-notice')).toBe(false);

      await Promise.all([page.waitForURL(/\/login\?logout$/, LONG), page.click('#monctl-logout')]);
      await openExplorer(page);
      expect(await page.textContent('#monctl-who')).toBe('Not logged in');
      expect(await tryMe(page)).toBe('401');
    } finally {
      await page.close();
    }
  });

  it('a 401 problem names /login and an API key, in the problem+json shape, with WWW-Authenticate', async () => {
    for (const path of ['/api/me', '/admin/api/users', '/api/resources/1/history']) {
      const res = await send(d.url, 'GET', path);
      expect(res.status).toBe(401);
      expect(String(res.headers['content-type'])).toBe('application/problem+json');
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
      expect(res.json()).toEqual({
        type: 'urn:monctl:problem:unauthorized',
        title: 'Unauthorized',
        status: 401,
        instance: path,
        detail: 'Authentication is required: log in at /login, or send an API key as Authorization: Bearer <key>',
      });
    }
  });

  it('the document still describes the session cookie', async () => {
    const doc = (await send(d.url, 'GET', '/v3/api-docs')).json();
    expect(doc.components.securitySchemes.session).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'JSESSIONID' });
  });
});
