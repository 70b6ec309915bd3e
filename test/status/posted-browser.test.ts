import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { eventually } from '../alerts/world.ts';
import { CHROMIUM_ARGS, openChromium, type TestBrowser } from '../helpers/browser.ts';
import { send } from '../helpers/http.ts';
import { makePki } from '../helpers/tls.ts';
import { startSmtpServer } from '../notifiers/smtp.ts';
import { type PostedWorld, seedPosted } from './posted-world.ts';
import { subscribersSettled } from './subscriber-fixtures.ts';
import { useStatusWorld } from './world.ts';

// Functions that run in the page use its globals; the project compiles without the DOM library.
declare const document: any;
declare const window: any;
declare const axe: any;

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const LONG = { timeout: 90_000 };
const PUBLIC = 'https://status.example.test';

/** Posted incidents as a reader sees them in Chromium: accessible in both schemes and widths, live without a reload, complete without JavaScript. */
describe('posted incidents in Chromium', () => {
  // Subscriber mail links to the page at --public-url; the test opens the same paths on the daemon.
  const world = useStatusWorld({ args: ['--public-url', PUBLIC] });
  let p: PostedWorld;
  let browser: TestBrowser;
  let profile: string;
  beforeAll(async () => {
    profile = mkdtempSync(join(tmpdir(), 'monctl-chromium-posted-'));
    [p, browser] = await Promise.all([seedPosted(world()), openChromium(profile)]);
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await p?.posts.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  async function open(path: string): Promise<{ page: Page; errors: string[] }> {
    const page = await browser.context.newPage();
    const errors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(world().d.url + path, LONG);
    return { page, errors };
  }

  /** axe (WCAG 2 A/AA and best practices) in light and dark, at 1280 and 360 px, and no horizontal scrolling. */
  async function accessible(page: Page): Promise<void> {
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const width of [1280, 360]) {
        await page.setViewportSize({ width, height: 900 });
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
        if (!(await page.evaluate(() => typeof axe !== 'undefined'))) await page.evaluate(AXE);
        const violations = await page.evaluate(async () =>
          (await axe.run(document, { runOnly: ['wcag2a', 'wcag2aa', 'best-practice'] })).violations.map(
            (v: { id: string; nodes: unknown[] }) => `${v.id} (${v.nodes.length})`,
          ),
        );
        expect(violations, `${scheme} ${width}px`).toEqual([]);
      }
    }
  }

  it('shows the page with posted incidents and the history page without axe violations or console errors', {
    timeout: 180_000,
  }, async () => {
    for (const path of ['/status/main', '/status/main/history']) {
      const { page, errors } = await open(path);
      try {
        await accessible(page);
        // A resolved incident's timeline opens from the keyboard (a <details>, no script).
        if (path === '/status/main') {
          await page.locator('details.pi summary').first().focus();
          await page.keyboard.press('Enter');
          expect(await page.locator('details.pi').first().getAttribute('open')).toBe('');
          await accessible(page);
        } else {
          await page.click('text=← Example Corp status');
          await page.waitForURL(/\/status\/main$/, LONG);
        }
        expect(errors).toEqual([]);
        expect(browser.offLoopback).toEqual([]);
      } finally {
        await page.close();
      }
    }
  });

  it('shows an incident opened, updated and resolved (through the API) on the open page without a reload, and tells screen readers', {
    timeout: 180_000,
  }, async () => {
    const { d, ids, page: statusPage } = world();
    const { page, errors } = await open('/status/main');
    try {
      await page.waitForFunction(() => document.body.dataset.live === 'on', undefined, LONG);
      await page.evaluate(() => {
        window.marker = 1;
      });
      const posts = (text: string) => page.waitForFunction((t) => document.querySelector('#posts')?.textContent.includes(t), text, LONG);
      const opened = await d.admin.call(operations.openPostedIncident, {
        params: { id: statusPage.id },
        body: { title: 'Uploads failing', impact: 'major', resources: [{ id: ids.cdn }], state: 'investigating', message: 'Uploads fail.' },
      });
      await posts('Uploads failing');
      expect(await page.locator(`#p${opened.id} + .meta`).textContent()).toMatch(/^InvestigatingMajor impactsince .*Affects cdn\.$/);
      expect(await page.locator('#posts-said').textContent()).toBe('Incidents updated');
      const at = { id: statusPage.id, incidentId: opened.id };
      await d.admin.call(operations.postIncidentUpdate, { params: at, body: { state: 'identified', message: 'A full **disk**.' } });
      await posts('A full disk.');
      expect(await page.locator(`#p${opened.id} + .meta .tag`).first().textContent()).toBe('Identified');
      await d.admin.call(operations.postIncidentUpdate, { params: at, body: { state: 'resolved', message: 'Disk grown.' } });
      await page.waitForFunction(
        () => [...document.querySelectorAll('#posts details summary')].some((s: any) => s.textContent === 'Uploads failing'),
        undefined,
        LONG,
      );
      expect(await page.evaluate(() => window.marker)).toBe(1);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('is complete without JavaScript: timelines, notices and the link to the history', { timeout: 180_000 }, async () => {
    let plain: Browser | undefined;
    try {
      plain = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS });
      const context = await plain.newContext({ javaScriptEnabled: false });
      await context.route('**/*', (route) => (/^http:\/\/127\.0\.0\.1[:/]/.test(route.request().url()) ? route.continue() : route.abort()));
      const page = await context.newPage();
      await page.goto(`${world().d.url}/status/main`, LONG);
      const main = await page.locator('main').innerText();
      for (const text of [
        'Current incidents',
        'Checkout errors',
        'Major impact',
        'We found the cause',
        'CDN upgrade under way',
        'Scheduled',
      ])
        expect(main).toContain(text);
      await page.click('text=Incident history');
      await page.waitForURL(/\/status\/main\/history$/, LONG);
      expect(await page.locator('main').innerText()).toContain('Storage outage');
    } finally {
      await plain?.close();
    }
  });

  it('signs a reader up with the form, confirms from the mail with a click, mails the next update once, and unsubscribes in one click', {
    timeout: 180_000,
  }, async () => {
    const { d, ids, page: statusPage } = world();
    const pki = makePki('monctl reader smtp CA');
    const smtp = await startSmtpServer({ ...pki.issue('smtp', 1), user: 'monctl', pass: 'smtp-password-1' });
    const address = 'reader@example.test';
    const mails = () => smtp.mails.filter((m) => m.envelopeTo.includes(address));
    const { page, errors } = await open('/status/main');
    try {
      const notifier = await d.admin.call(operations.createNotifier, {
        body: {
          name: 'reader-mail',
          type: 'EMAIL',
          config: {
            host: '127.0.0.1',
            port: smtp.port,
            username: 'monctl',
            password: 'smtp-password-1',
            from: 'status@example.test',
            to: ['ops@example.test'],
            tlsCa: pki.ca,
          },
        },
      });
      await d.admin.call(operations.updateStatusPage, {
        params: { id: statusPage.id },
        body: { subscriptions: true, emailNotifierId: notifier.id },
      });
      // The reader's own steps: the form on the page, then the link in the mail and its button.
      await page.reload(LONG);
      await page.getByLabel('Email address').fill(address);
      await page.getByRole('button', { name: 'Subscribe' }).click();
      await page.getByRole('heading', { name: 'Check your inbox' }).waitFor(LONG);
      await eventually('the confirmation mail', () => mails().length === 1, 60_000);
      expect(mails()[0].mail.subject).toBe('Confirm your subscription to Example Corp status');
      const confirm = new RegExp(`${PUBLIC}(/status/main/subscribe/confirm\\?token=\\S+)`).exec(mails()[0].mail.text ?? '');
      expect(confirm).not.toBeNull();
      await page.goto(d.url + confirm![1], LONG);
      await page.getByRole('button', { name: 'Confirm subscription' }).click();
      await page.getByRole('heading', { name: 'Subscribed' }).waitFor(LONG);

      const opened = await d.admin.call(operations.openPostedIncident, {
        params: { id: statusPage.id },
        body: { title: 'Search is slow', impact: 'minor', resources: [{ id: ids.web }], state: 'investigating', message: 'Looking.' },
      });
      await eventually('the update mail', () => mails().length === 2, 60_000);
      await subscribersSettled([d]);
      expect(mails().map((m) => m.mail.subject)).toEqual([
        'Confirm your subscription to Example Corp status',
        '[Example Corp status] Search is slow: Investigating',
      ]);
      // The mail client's one-click (RFC 8058): a POST to the List-Unsubscribe URL, no cookie.
      const header = mails()[1].mail.headerLines.find((h) => h.key === 'list-unsubscribe')?.line ?? '';
      const unsubscribe = new RegExp(`<${PUBLIC}(/status/main/unsubscribe\\?token=[^>]+)>`).exec(header);
      expect(mails()[1].mail.headerLines.find((h) => h.key === 'list-unsubscribe-post')?.line).toBe(
        'List-Unsubscribe-Post: List-Unsubscribe=One-Click',
      );
      const oneClick = { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' };
      expect((await send(d.url, 'POST', unsubscribe![1], oneClick)).status).toBe(200);
      await d.admin.call(operations.postIncidentUpdate, {
        params: { id: statusPage.id, incidentId: opened.id },
        body: { state: 'resolved', message: 'Fast again.' },
      });
      await subscribersSettled([d]);
      expect(mails(), 'nothing after the one-click unsubscribe').toHaveLength(2);
      expect(errors).toEqual([]);
      expect(browser.offLoopback).toEqual([]);
    } finally {
      await page.close();
      await d.admin.call(operations.updateStatusPage, { params: { id: statusPage.id }, body: { subscriptions: false } });
      await smtp.close();
      pki.cleanup();
    }
  });
});
