import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { CHROMIUM_ARGS, openChromium, type TestBrowser } from '../helpers/browser.ts';
import { ROOT } from '../helpers/daemon.ts';
import { useStatusWorld, USER } from './world.ts';

// Functions that run in the page use its globals; the project compiles without the DOM library.
declare const document: any;
declare const window: any;
declare function getComputedStyle(el: unknown, pseudo?: string): any;
declare const axe: any;
declare const Image: any;

/** axe-core, the engine of Lighthouse's accessibility audits, run in the page for the dark scheme too. */
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** Screenshots are kept for people to look at (.tmp/ is ignored by git). */
const SHOTS = join(ROOT, '.tmp/status-screenshots');
// Chromium on a busy 2-core machine: generous bounds for loading; the one timing the issue asks for (2 s) is its own.
const LONG = { timeout: 90_000 };

/** The page in Debian's Chromium: layouts, colour schemes, visibility, live updates, and no JavaScript. */
describe('status page in Chromium', () => {
  const world = useStatusWorld();
  let browser: TestBrowser;
  let profile: string;
  beforeAll(async () => {
    profile = mkdtempSync(join(tmpdir(), 'monctl-chromium-'));
    browser = await openChromium(profile);
    mkdirSync(SHOTS, { recursive: true });
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  /** A page that records console errors and uncaught exceptions. */
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
  const text = (page: Page) => page.locator('main').innerText();

  it('renders at 1280 and 360 px, light and dark, without console errors, horizontal scrolling or axe violations', {
    timeout: 180_000,
  }, async () => {
    const { page, errors } = await open('/status/main');
    try {
      for (const scheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
        expect(background).toBe(scheme === 'light' ? 'rgb(255, 255, 255)' : 'rgb(13, 17, 23)');
        for (const width of [1280, 360]) {
          await page.setViewportSize({ width, height: 900 });
          const file = join(SHOTS, `status-${width}-${scheme}.png`);
          await page.screenshot({ path: file, fullPage: true });
          expect(statSync(file).size).toBeGreaterThan(5_000);
          expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
          // At 360 px the bar shows its last 30 days; at 1280 all 90.
          const shown = await page.locator('#r' + world().ids.web + ' .bar i:visible').count();
          expect(shown).toBe(width === 360 ? 30 : 90);
          // WCAG 2 A/AA and axe's best practices (colour contrast included) in this scheme and width.
          if (!(await page.evaluate(() => typeof axe !== 'undefined'))) await page.evaluate(AXE);
          const violations = await page.evaluate(async () =>
            (await axe.run(document, { runOnly: ['wcag2a', 'wcag2aa', 'best-practice'] })).violations.map(
              (v: { id: string; nodes: unknown[] }) => `${v.id} (${v.nodes.length})`,
            ),
          );
          expect(violations, `${scheme} ${width}px`).toEqual([]);
        }
      }
      // A day's figure on hover (from the stylesheet for a 100 % day). Five days ago: web's past
      // incident began ten days ago and lasted 45 minutes, so run late in a UTC day it reaches
      // into the day after (the bar's day 80, which this test hovered once, and failed at 23:30 UTC).
      await page.setViewportSize({ width: 1280, height: 900 });
      await page.emulateMedia({ colorScheme: 'light' });
      const day = page.locator(`#r${world().ids.web} .bar i`).nth(84);
      await day.hover();
      const tip = await day.evaluate((el) => getComputedStyle(el, '::after').content);
      expect(tip).toMatch(/^"[A-Z][a-z]{2} \d{1,2}: 100 %"$/);
      expect(errors).toEqual([]);
      expect(browser.offLoopback).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('hides AUTHENTICATED and HIDDEN resources from anonymous visitors, and shows AUTHENTICATED ones after login', {
    timeout: 180_000,
  }, async () => {
    const { page, errors } = await open('/status/main');
    try {
      const anonymous = await text(page);
      expect(anonymous).toContain('Website');
      expect(anonymous).toContain('Maintenance in progress');
      for (const absent of ['Internal tools', 'wiki', 'ci', 'Secret', 'vault'])
        expect(anonymous).not.toMatch(new RegExp(`\\b${absent}\\b`));

      await page.goto(`${world().d.url}/login`, LONG);
      await page.fill('#username', USER.username);
      await page.fill('#password', USER.password);
      await Promise.all([page.waitForURL(/\/api$/, LONG), page.click('button[type=submit]')]);
      await page.goto(`${world().d.url}/status/main`, LONG);
      const loggedIn = await text(page);
      for (const present of ['Internal tools', 'wiki', 'ci']) expect(loggedIn).toMatch(new RegExp(`\\b${present}\\b`));
      for (const absent of ['Secret', 'vault']) expect(loggedIn).not.toMatch(new RegExp(`\\b${absent}\\b`));
      expect(loggedIn).toContain('Partial outage');
      expect(errors).toEqual([]);
    } finally {
      // Log out again so the other tests see the anonymous page.
      await browser.context.clearCookies();
      await page.close();
    }
  });

  it('shows a status change, and the banner of the incident it opens, on the open page within 2 s, without a reload', {
    timeout: 180_000,
  }, async () => {
    const { d, ids, target } = world();
    const { page, errors } = await open('/status/main');
    try {
      const pill = page.locator(`#r${ids.web} .st`);
      expect(await pill.textContent()).toBe('Operational');
      // The script opens the stream STREAM_DELAY_MS after the load event, and marks <body> once it is open.
      await page.waitForFunction(() => document.body.dataset.live === 'on', undefined, LONG);
      await page.evaluate(() => {
        (window as unknown as { marker: number }).marker = 1;
      });
      target.set('web', 503);
      await d.admin.call(operations.checkResource, { params: { id: ids.web } });
      await page.waitForFunction((id) => document.querySelector(`#r${id} .st`)?.textContent === 'Down', ids.web, { timeout: 2_000 });
      expect(await pill.getAttribute('class')).toBe('st down');
      // A failing check below the failure threshold: degraded; two more reach it: an incident opens and the banner says so.
      await page.waitForFunction(() => document.getElementById('overall-label')?.textContent === 'Degraded service', undefined, {
        timeout: 2_000,
      });
      for (let i = 0; i < 2; i++) await d.admin.call(operations.checkResource, { params: { id: ids.web } });
      await page.waitForFunction(() => document.getElementById('overall-label')?.textContent === 'Partial outage', undefined, {
        timeout: 2_000,
      });
      expect(await page.locator('#overall').getAttribute('class')).toBe('banner partial_outage');
      // The same document: no reload happened.
      expect(await page.evaluate(() => (window as unknown as { marker?: number }).marker)).toBe(1);
      expect(errors).toEqual([]);
    } finally {
      target.set('web', 200);
      await d.admin.call(operations.checkResource, { params: { id: ids.web } });
      await page.close();
    }
  });

  /** 404 answers of the daemon so far, from its request metrics (the browser's own favicon request is not a page request). */
  async function notFoundCount(): Promise<number> {
    const text = await (
      await fetch(`${world().d.url}/actuator/prometheus`, { headers: { authorization: `Bearer ${world().d.adminKey}` } })
    ).text();
    return [...text.matchAll(/^monctl_http_request_duration_seconds_count\{[^}]*status="404"[^}]*\} (\d+)$/gm)].reduce(
      (n, m) => n + Number(m[1]),
      0,
    );
  }

  it('has an inline favicon, allowed by its CSP, and opens its live stream only after the load event', { timeout: 180_000 }, async () => {
    const { page, errors } = await open('/status/main');
    try {
      // Loaded (goto waits for the load event), and the stream is not open yet.
      expect(await page.evaluate(() => document.body.dataset.live)).toBeUndefined();
      await page.waitForFunction(() => document.body.dataset.live === 'on', undefined, LONG);
      const icon = await page.locator('link[rel=icon]').getAttribute('href');
      expect(icon).toMatch(/^data:image\/svg\+xml,/);
      // It loads under the page's CSP (img-src allows data:).
      expect(
        await page.evaluate(async (src) => {
          const img = new Image();
          img.src = src;
          await img.decode();
          return img.naturalWidth;
        }, icon),
      ).toBeGreaterThan(0);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('lets `chromium --headless --virtual-time-budget=5000 --screenshot` finish, at desktop and phone sizes, with no 404 (favicon)', {
    timeout: 240_000,
  }, async () => {
    const profileDir = mkdtempSync(join(tmpdir(), 'monctl-chromium-cli-'));
    // Chromium asks for /favicon.ico when a page names no icon (Playwright's intercepted contexts do not): it was a 404.
    const before = await notFoundCount();
    try {
      for (const [name, size] of [
        ['desktop', '1280,800'],
        ['phone', '390,844'],
      ]) {
        const file = join(SHOTS, `headless-${name}.png`);
        rmSync(file, { force: true });
        // An always-open EventSource kept the network busy: virtual time never ran out and Chromium never exited.
        // Bounded here by 100 s (it takes a few seconds), after which Chromium is killed and the test fails.
        const child = spawn(
          '/usr/bin/chromium',
          [
            '--headless=new',
            ...CHROMIUM_ARGS.filter((a) => a !== '--headless'),
            `--user-data-dir=${profileDir}`,
            '--virtual-time-budget=5000',
            `--window-size=${size}`,
            '--hide-scrollbars',
            `--screenshot=${file}`,
            `${world().d.url}/status/main`,
          ],
          { stdio: 'ignore', timeout: 100_000, killSignal: 'SIGKILL' },
        );
        const exit = await new Promise<[number | null, string | null]>((resolve) =>
          child.once('exit', (c, signal) => resolve([c, signal])),
        );
        expect(exit, `chromium ${name}: [exit code, signal]`).toEqual([0, null]);
        expect(existsSync(file)).toBe(true);
        expect(statSync(file).size).toBeGreaterThan(5_000);
      }
      expect(await notFoundCount()).toBe(before);
    } finally {
      rmSync(profileDir, { recursive: true, force: true });
    }
  });

  it('is complete with JavaScript disabled, and refreshes itself every 60 s', { timeout: 180_000 }, async () => {
    let plain: Browser | undefined;
    try {
      plain = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS });
      const context = await plain.newContext({ javaScriptEnabled: false });
      await context.route('**/*', (route) => (/^http:\/\/127\.0\.0\.1[:/]/.test(route.request().url()) ? route.continue() : route.abort()));
      const page = await context.newPage();
      await page.goto(`${world().d.url}/status/main`, LONG);
      const main = await page.locator('main').innerText();
      expect(main).toContain('Maintenance in progress');
      for (const kind of ['Information', 'Warning', 'Problem']) expect(main).toContain(kind);
      // web's last 24 hours: the rollups and the raw checks of this hour (the earlier tests' too).
      const summary: any = await (await fetch(`${world().d.url}/api/status-pages/main/summary`)).json();
      const web = summary.groups[0].resources.find((r: { id: number }) => r.id === world().ids.web);
      expect(main).toMatch(new RegExp(`24 h\\s*${(Math.floor(web.uptime.h24 * 100) / 100).toFixed(2).replace('.', '\\.')} %`));
      expect(main).toContain('CDN provider upgrade');
      expect(main).toContain('Recent incidents');
      expect(await page.locator('.bar').count()).toBe(3);
      expect(await page.locator('.bar i').count()).toBe(270);
      // Without scripting, the <noscript> in the head is parsed: its meta refresh is live.
      expect(await page.locator('meta[http-equiv="refresh"]').getAttribute('content')).toBe('60');
    } finally {
      await plain?.close();
    }
  });
});
