import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { bearer, okJson } from '../helpers/http.ts';

/**
 * What the alert tests share: a real daemon (scheduler off, checks driven by
 * `POST /api/resources/{id}/check`), a loopback target whose answer the test
 * flips, and API calls that fail loudly.
 */
export interface AlertWorld {
  d: TestDaemon;
  call<T = any>(method: string, path: string, body?: unknown): Promise<T>;
  target: { url: string; status: number; close(): Promise<void> };
  resource(name: string, extra?: Record<string, unknown>): Promise<{ id: number }>;
  check(id: number): Promise<void>;
  /** `times` checks in a row (3 opens an incident at the default threshold). */
  checks(id: number, times: number): Promise<void>;
  notifier(name: string, type: string, config: Record<string, unknown>): Promise<{ id: number; signingSecret?: string }>;
  rule(body: Record<string, unknown>): Promise<{ id: number }>;
}

export async function startTarget(): Promise<AlertWorld['target']> {
  const state = { status: 200 };
  const server: Server = createServer((_req, res) => res.writeHead(state.status).end('target'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return Object.assign(state, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  });
}

export async function startAlertWorld(opts: { args?: string[]; dataDir?: string; env?: Record<string, string> } = {}): Promise<AlertWorld> {
  const d = await startDaemon({
    args: ['--scheduler', 'off', '--notifier-retry-base', '200ms', ...(opts.args ?? [])],
    dataDir: opts.dataDir,
    env: opts.env,
  });
  return worldOf(d, await startTarget());
}

export function worldOf(d: TestDaemon, target: AlertWorld['target']): AlertWorld {
  const call = (method: string, path: string, body?: unknown) => okJson(d.url, method, path, body, bearer(d.adminKey));
  return {
    d,
    call,
    target,
    resource: (name, extra = {}) =>
      call('POST', '/api/resources', { name, resourceType: 'HTTP', target: `${target.url}/${name}`, ...extra }),
    check: async (id) => {
      await call('POST', `/api/resources/${id}/check`);
    },
    checks: async (id, times) => {
      for (let i = 0; i < times; i++) await call('POST', `/api/resources/${id}/check`);
    },
    notifier: (name, type, config) => call('POST', '/admin/api/notifiers', { name, type, config }),
    rule: (body) => call('POST', '/admin/api/alert-rules', { groupWaitSeconds: 0, ...body }),
  };
}

/** Polls until `probe` holds, or fails after `ms` with `what`. */
export async function eventually(what: string, probe: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The structured items of a verified Standard Webhooks payload. */
export type WebhookItem = { kind: string; reminder: boolean; subject: { name: string }; incidentId: number | null };
export const itemsOf = (payload: unknown): WebhookItem[] => (payload as { data: { items: WebhookItem[] } }).data.items;
