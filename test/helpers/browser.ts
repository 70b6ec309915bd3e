import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

/** The Debian Chromium, started headless with everything that phones home switched off. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface TestBrowser {
  context: BrowserContext;
  /** Every URL the pages asked for. */
  requests: string[];
  /** Requests that were not for loopback: they are aborted, never sent. */
  offLoopback: string[];
  close(): Promise<void>;
}

function isLoopback(url: string): boolean {
  const { protocol, hostname } = new URL(url);
  if (protocol === 'data:' || protocol === 'blob:' || protocol === 'about:') return true;
  // Chromium resolves `*.localhost` to loopback itself (a route's hostname in the browser tests).
  return /^127\.\d+\.\d+\.\d+$/.test(hostname) || hostname === '[::1]' || hostname === 'localhost' || hostname.endsWith('.localhost');
}

/**
 * Headless Chromium with a fresh profile in `userDataDir` (and `extraArgs`). Every request goes
 * through a route that lets loopback through and aborts (and records) the rest.
 */
export async function openChromium(userDataDir: string, extraArgs: string[] = []): Promise<TestBrowser> {
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: [...CHROMIUM_ARGS, ...extraArgs],
  });
  const requests: string[] = [];
  const offLoopback: string[] = [];
  await context.route('**/*', (route) => {
    const url = route.request().url();
    requests.push(url);
    if (isLoopback(url)) return route.continue();
    offLoopback.push(url);
    return route.abort();
  });
  return { context, requests, offLoopback, close: () => context.close() };
}

/** openChromium with a profile in a new temp dir, which close() removes. */
export async function openChromiumInTemp(): Promise<TestBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'monctl-chromium-'));
  try {
    const browser = await openChromium(profile);
    return { ...browser, close: () => browser.close().finally(() => rmSync(profile, { recursive: true, force: true })) };
  } catch (err) {
    rmSync(profile, { recursive: true, force: true });
    throw err;
  }
}

/** Debian's Chromium with a DevTools port for Lighthouse; resolves with the port once it listens. */
export function startChromium(profile: string): Promise<{ port: number; proc: ChildProcess }> {
  const proc = spawn('/usr/bin/chromium', [...CHROMIUM_ARGS, '--remote-debugging-port=0', `--user-data-dir=${profile}`, 'about:blank'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let err = '';
    proc.stderr!.on('data', (chunk) => {
      err += chunk;
      const m = /DevTools listening on ws:\/\/[^:]+:(\d+)\//.exec(err);
      if (m) resolve({ port: Number(m[1]), proc });
    });
    proc.once('exit', (code) => reject(new Error(`chromium exited with ${code}\n${err}`)));
  });
}
