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

/** The alert loops of test daemons tick every 200 ms (--alert-tick): 5 times faster than by default. */
export const ALERT_TEST_ARGS = ['--alert-tick', '200ms'];

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
    // A 200 ms alert tick: routing 5 times, dispatch 10 times and reminders once a second.
    args: ['--scheduler', 'off', '--notifier-retry-base', '200ms', ...ALERT_TEST_ARGS, ...(opts.args ?? [])],
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
export async function eventually(what: string, probe: () => boolean | Promise<boolean>, ms = 15_000, everyMs = 50): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Passes of each alert loop of `d` so far (`monctl_alert_passes_total`), and the backlog (`monctl_outbox_pending`). */
export async function alertLoops(d: TestDaemon): Promise<{ routing: number; reminders: number; dispatch: number; pending: number }> {
  const text = await fetch(`${d.url}/actuator/prometheus`, { headers: bearer(d.adminKey) }).then((r) => r.text());
  const value = (pattern: RegExp) =>
    text
      .match(pattern)
      ?.slice(1)
      .reduce((sum, n) => sum + Number(n), 0) ?? 0;
  const pending = [...text.matchAll(/^monctl_outbox_pending\{stage="\w+"\} (\d+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
  return {
    routing: value(/^monctl_alert_passes_total\{loop="routing"\} (\d+)$/m),
    reminders: value(/^monctl_alert_passes_total\{loop="reminders"\} (\d+)$/m),
    dispatch: value(/^monctl_alert_passes_total\{loop="dispatch"\} (\d+)$/m),
    pending,
  };
}

/**
 * Waits until nothing more can go out: no event unrouted and no notification unsent, then
 * `passes` more passes of routing and dispatch (and of reminders with `reminders`) on every daemon
 * of `ds`. Anything they would still send is sent by then: a check that nothing more arrived is
 * sound however slow the machine, where a sleep is both longer and a guess.
 */
export async function settled(ds: TestDaemon | TestDaemon[], opts: { passes?: number; reminders?: boolean } = {}): Promise<void> {
  const daemons = Array.isArray(ds) ? ds : [ds];
  const passes = opts.passes ?? 2;
  const deadline = Date.now() + 30_000;
  for (;;) {
    // Polled every 200 ms: each poll renders every daemon's metrics and counts the outbox.
    await eventually('an empty alert backlog', async () => (await alertLoops(daemons[0])).pending === 0, deadline - Date.now(), 200);
    const start = await Promise.all(daemons.map(alertLoops));
    await eventually(
      `${passes} alert loop passes`,
      async () =>
        (await Promise.all(daemons.map(alertLoops))).every(
          (now, i) =>
            now.routing >= start[i].routing + passes &&
            now.dispatch >= start[i].dispatch + passes &&
            (!opts.reminders || now.reminders >= start[i].reminders + passes),
        ),
      deadline - Date.now(),
      200,
    );
    // Those passes wrote nothing new (a reminder, a catch-up): settled. Else wait for that too.
    if ((await alertLoops(daemons[0])).pending === 0) return;
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The structured items of a verified Standard Webhooks payload. */
export type WebhookItem = { kind: string; reminder: boolean; subject: { name: string }; incidentId: number | null };
export const itemsOf = (payload: unknown): WebhookItem[] => (payload as { data: { items: WebhookItem[] } }).data.items;
