import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConsoleMessage, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { openChromium, type TestBrowser } from '../helpers/browser.ts';
import { ADMIN_PASSWORD, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { send } from '../helpers/http.ts';
import { startTarget } from '../tunnel/helpers.ts';

/**
 * Issue 14, finding 8: `/api` embeds the session's CSRF token and could be
 * framed by any page of the same site (127.0.0.1 on another port is one).
 * Every HTML page now forbids framing (CSP frame-ancestors and
 * X-Frame-Options), and the explorer's CSP allows only its own scripts: no
 * inline script, the token is data in a <meta>. Headless Chromium checks that
 * the explorer still works under it with no CSP violation, and that a framing
 * page gets nothing.
 */
describe('the explorer and the login page cannot be framed, and run under a strict CSP', () => {
  let d: TestDaemon;
  let browser: TestBrowser;
  let profile: string;
  let framer: Awaited<ReturnType<typeof startTarget>>;
  beforeAll(async () => {
    d = await startDaemon({ env: { MONCTL_SCHEDULER: 'off' } });
    await d.admin.call(operations.createUser, { body: { username: 'alice', password: 'alice-password-1', role: 'USER' } });
    // Another origin of the same site: a page that frames the explorer and the login form.
    framer = await startTarget((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(
        '<!doctype html><script>window.loaded = 0;</script>' +
          `<iframe onload="loaded++" src="${d.url}/api"></iframe><iframe onload="loaded++" src="${d.url}/login"></iframe>`,
      );
    });
    profile = mkdtempSync(join(tmpdir(), 'monctl-chromium-'));
    browser = await openChromium(profile);
  });
  afterAll(async () => {
    await browser?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    await framer?.close();
    await d?.stop();
  });

  const LONG = { timeout: 90_000 };

  it('every HTML page says: no framing, no sniffing, same-origin referrer; the explorer: scripts from itself only', async () => {
    for (const path of ['/api', '/login']) {
      const res = await send(d.url, 'GET', path);
      expect(res.status).toBe(200);
      expect(String(res.headers['content-type'])).toMatch(/^text\/html/);
      const csp = String(res.headers['content-security-policy']);
      expect(csp, path).toMatch(/(^|; )frame-ancestors 'none'(;|$)/);
      expect(csp, path).not.toMatch(/script-src[^;]*'unsafe-(inline|eval)'/);
      expect(res.headers['x-frame-options'], path).toBe('DENY');
      expect(res.headers['x-content-type-options'], path).toBe('nosniff');
      expect(res.headers['referrer-policy'], path).toBe('same-origin');
    }
    const page = await send(d.url, 'GET', '/api');
    expect(String(page.headers['content-security-policy'])).toMatch(/(^|; )script-src 'self'(;|$)/);
    // No inline script: every <script> loads a file.
    const scripts = [...page.text.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attrs, body] of scripts) {
      expect(attrs).toMatch(/\bsrc="\/swagger-ui\//);
      expect(body.trim()).toBe('');
    }
    const own = await send(d.url, 'GET', '/swagger-ui/monctl-explorer.js');
    expect(own.status).toBe(200);
    expect(String(own.headers['content-type'])).toMatch(/^text\/javascript/);
    expect(own.headers['x-content-type-options']).toBe('nosniff');
    expect(own.text).toContain('SwaggerUIBundle(');
    for (const asset of ['/swagger-ui/swagger-ui-bundle.js', '/swagger-ui/swagger-ui.css', '/v3/api-docs']) {
      expect((await send(d.url, 'GET', asset)).headers['x-content-type-options'], asset).toBe('nosniff');
    }
  });

  /** CSP violations and script errors a page reports. */
  function watchPage(page: Page): string[] {
    const problems: string[] = [];
    page.on('console', (msg: ConsoleMessage) => {
      if (/Content Security Policy|Refused to/i.test(msg.text())) problems.push(`console: ${msg.text()}`);
    });
    page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
    return problems;
  }

  it('logged in as ADMIN, the explorer works under its CSP: no violation, Try it out reads and writes (with the CSRF token)', {
    timeout: 180_000,
  }, async () => {
    const page = await browser.context.newPage();
    const problems = watchPage(page);
    try {
      await page.goto(`${d.url}/login`, LONG);
      await page.fill('#username', 'admin');
      await page.fill('#password', ADMIN_PASSWORD);
      await Promise.all([page.waitForURL(`${d.url}/api`, LONG), page.click('button[type=submit]')]);
      await page.waitForSelector('#operations-Session-me', LONG);
      expect(await page.textContent('#monctl-session')).toMatch(/^Logged in as admin \(ADMIN\) · Log out/);

      // A read.
      await page.click('#operations-Session-me .opblock-summary');
      await page.click('#operations-Session-me .try-out__btn');
      await page.click('#operations-Session-me .execute');
      const me = page.locator('#operations-Session-me .live-responses-table .response .response-col_status').first();
      await me.waitFor(LONG);
      expect((await me.textContent())!.trim()).toBe('200');

      // A write: a session call without X-CSRF-TOKEN would be 403, so 200 shows the token came from the <meta>.
      const op = '[id^="operations-"][id$="-createGroup"]';
      await page.click(`${op} .opblock-summary`);
      await page.click(`${op} .try-out__btn`);
      await page.fill(`${op} textarea.body-param__text`, JSON.stringify({ name: 'framed-not', visibility: 'PUBLIC' }));
      await page.click(`${op} .execute`);
      const created = page.locator(`${op} .live-responses-table .response .response-col_status`).first();
      await created.waitFor(LONG);
      expect((await created.textContent())!.trim()).toBe('200');
      const groups = await d.admin.call(operations.listGroups, {});
      expect(groups.map((g) => g.name)).toContain('framed-not');

      expect(problems).toEqual([]);
      expect(browser.offLoopback).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('a page of the same site that frames /api or /login gets neither', { timeout: 120_000 }, async () => {
    const page = await browser.context.newPage();
    const refused: string[] = [];
    page.on('console', (msg) => {
      if (/frame-ancestors|X-Frame-Options/.test(msg.text())) refused.push(msg.text());
    });
    try {
      await page.goto(framer.url, LONG);
      // Both frames finish (loaded or blocked), then neither may hold the page it asked for.
      await page.waitForFunction('window.loaded === 2', undefined, LONG);
      for (const frame of page.frames().filter((f) => f !== page.mainFrame())) {
        const reached = await frame
          .evaluate('Boolean(document.querySelector(\'#monctl-session, form[action="/login"]\'))')
          .catch(() => false);
        expect(reached, `frame ${frame.url()} shows the daemon's page`).toBe(false);
      }
      // One refusal per frame (the message names the daemon's origin, not the path).
      expect(
        refused.filter((m) => m.includes(d.url)),
        refused.join('\n'),
      ).toHaveLength(2);
    } finally {
      await page.close();
    }
  });
});
