import Database from 'better-sqlite3';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import type { ApiClient } from '../../src/client/api-client.ts';
import { HttpError } from '../../src/errors.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { until } from '../helpers/http.ts';
import { edge, startAgent, type TestAgent } from '../tunnel/helpers.ts';

// Crash safety (issue 8, item 1): write load against a real daemon, SIGKILL at
// a random moment, restart on the same data dir, many times in a row. Every
// write the daemon acknowledged with 2xx must survive every crash; the
// database stays intact and the scheduler resumes after the last restart.
// MONCTL_CRASH_ROUNDS sets the number of kills (default 20) for longer runs.

const ROUNDS = Math.max(1, Number(process.env.MONCTL_CRASH_ROUNDS ?? 20) || 20);
/** Kill moment after the load starts: uniform in [MIN_KILL_MS, MAX_KILL_MS). */
const MIN_KILL_MS = 150;
const MAX_KILL_MS = 1_500;
const INTERVAL_SECONDS = 10;

let web: Server;
let target: string;
let base: string;
let dataDir: string;
let daemon: TestDaemon | undefined;
let agent: TestAgent | undefined;
/** The API port, the same across restarts, so that the agent can dial back. */
let apiPort: number;

beforeAll(async () => {
  web = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
  target = `http://127.0.0.1:${(web.address() as { port: number }).port}/`;
  base = mkdtempSync(join(tmpdir(), 'monctl-crash-'));
  dataDir = join(base, 'data');
  const probe = createTcpServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  apiPort = (probe.address() as { port: number }).port;
  await new Promise((r) => probe.close(r));
});

const restart = () => startDaemon({ dataDir, args: ['--listen', `127.0.0.1:${apiPort}`] });

afterAll(async () => {
  await agent?.stop('SIGKILL');
  await daemon?.stop('SIGKILL');
  web.closeAllConnections();
  await new Promise((r) => web.close(r));
  rmSync(base, { recursive: true, force: true });
});

/** What the daemon acknowledged with 2xx, across all rounds. */
const acked = {
  resources: new Map<number, string>(),
  /** History entry ids per resource. */
  history: new Map<number, Set<number>>(),
  /** Highest announcement version acknowledged, and highest ever sent (possibly in flight at the kill). */
  announcementAcked: 0,
  announcementSent: 0,
};

const contentOf = (version: number) => `<p>version ${version}</p>`;
const versionOf = (content: string) => Number(/version (\d+)/.exec(content)?.[1] ?? Number.NaN);

/** A request cut by the kill fails with a connection error: not acknowledged, not a failure. */
function unexpected(err: unknown, failures: string[]): void {
  if (err instanceof HttpError) failures.push(`${err.status} ${err.message}`);
}

async function allHistoryIds(admin: ApiClient, id: number): Promise<Set<number>> {
  const ids = new Set<number>();
  let path: string | undefined = `/api/resources/${id}/history?limit=1000`;
  while (path) {
    const res = await admin.raw('GET', path);
    for (const entry of JSON.parse(res.text) as Array<{ id: number }>) ids.add(entry.id);
    path = /<([^>]+)>;\s*rel="next"/.exec(String(res.headers.link ?? ''))?.[1];
  }
  return ids;
}

/** Every acknowledged write is there, the announcement is not older than its last acknowledged version. */
async function verify(d: TestDaemon, announcementId: number, round: number): Promise<void> {
  const health = await d.client().raw('GET', '/actuator/health');
  expect(JSON.parse(health.text)).toEqual({ status: 'UP' });

  const present = new Map((await d.admin.call(operations.listAdminResources)).map((r) => [r.id, r.name]));
  for (const [id, name] of acked.resources) {
    expect(present.get(id), `round ${round}: acknowledged resource ${id} (${name})`).toBe(name);
  }

  const announcement = await d.admin.call(operations.getAnnouncement, { params: { id: announcementId } });
  const version = versionOf(announcement.content);
  expect(version, `round ${round}: announcement "${announcement.content}"`).toBeGreaterThanOrEqual(acked.announcementAcked);
  expect(version, `round ${round}: announcement "${announcement.content}"`).toBeLessThanOrEqual(acked.announcementSent);

  for (const [id, entries] of acked.history) {
    const stored = await allHistoryIds(d.admin, id);
    const lost = [...entries].filter((entry) => !stored.has(entry));
    expect(lost, `round ${round}: acknowledged history entries of resource ${id}`).toEqual([]);
  }
}

/**
 * Write load until `running()` turns false: resource creates, announcement
 * PUTs (one at a time, versions increasing) and manual checks. The scheduler
 * adds its own batched writes (every new resource is checked at once).
 */
function load(d: TestDaemon, round: number, announcementId: number, checkable: number[], running: () => boolean, failures: string[]) {
  const creator = async (worker: number) => {
    for (let i = 0; running(); i++) {
      const name = `crash-${round}-${worker}-${i}`;
      try {
        const created = await d.admin.call(operations.createResource, {
          body: { name, resourceType: 'HTTP', target, intervalSeconds: 86_400 },
        });
        acked.resources.set(created.id, created.name);
      } catch (err) {
        unexpected(err, failures);
      }
    }
  };
  const announcer = async () => {
    while (running()) {
      const version = ++acked.announcementSent;
      try {
        const updated = await d.admin.call(operations.replaceAnnouncement, {
          params: { id: announcementId },
          body: { kind: 'INFORMATION', content: contentOf(version), active: true },
        });
        acked.announcementAcked = Math.max(acked.announcementAcked, versionOf(updated.content));
      } catch (err) {
        unexpected(err, failures);
      }
    }
  };
  const checker = async () => {
    for (let i = 0; running(); i++) {
      const id = checkable[i % checkable.length];
      try {
        const entry = await d.admin.call(operations.checkResource, { params: { id } });
        const set = acked.history.get(id) ?? new Set<number>();
        set.add(entry.id);
        acked.history.set(id, set);
      } catch (err) {
        unexpected(err, failures);
      }
    }
  };
  return Promise.all([creator(0), creator(1), announcer(), checker(), checker()]);
}

it(`every acknowledged write survives ${ROUNDS} SIGKILLs; the database stays intact, probes resume, the agent reconnects`, async () => {
  const started = Date.now();
  daemon = await restart();

  // A real agent with an HTTP route: it must find its way back after the kills.
  const agentRow = await daemon.admin.call(operations.createAgent, { body: { name: 'crash-agent' } });
  const { token } = await daemon.admin.call(operations.rotateAgentToken, { params: { id: agentRow.id } });
  writeFileSync(join(base, 'agent-token'), token, { mode: 0o600 });
  await daemon.admin.call(operations.createRoute, {
    body: { name: 'crash-route', type: 'HTTP', agentId: agentRow.id, target, hostname: 'crash.test' },
  });
  agent = startAgent(daemon.url, join(base, 'agent-token'));

  // Resources checked on a 10 s interval (and by hand under load), and one announcement.
  const checkable: number[] = [];
  for (let i = 0; i < 3; i++) {
    const r = await daemon.admin.call(operations.createResource, {
      body: { name: `crash-probe-${i}`, resourceType: 'HTTP', target, intervalSeconds: INTERVAL_SECONDS },
    });
    acked.resources.set(r.id, r.name);
    checkable.push(r.id);
  }
  const announcement = await daemon.admin.call(operations.createAnnouncement, {
    body: { kind: 'INFORMATION', content: contentOf(0), active: true },
  });

  const failures: string[] = [];
  let lastKill = 0;
  let lastStart = 0;
  for (let round = 1; round <= ROUNDS; round++) {
    let running = true;
    const d = daemon;
    const work = load(d, round, announcement.id, checkable, () => running, failures);
    await new Promise((r) => setTimeout(r, MIN_KILL_MS + Math.random() * (MAX_KILL_MS - MIN_KILL_MS)));
    lastKill = Date.now();
    await d.stop('SIGKILL');
    running = false;
    await work;
    daemon = undefined;

    daemon = await restart();
    lastStart = Date.now();
    await verify(daemon, announcement.id, round);
  }
  expect(failures, 'non-2xx answers under load').toEqual([]);
  // The load did write: each kind of write was acknowledged many times.
  expect(acked.resources.size).toBeGreaterThan(3 + ROUNDS);
  expect(acked.announcementAcked).toBeGreaterThan(ROUNDS);
  expect([...acked.history.values()].reduce((n, s) => n + s.size, 0)).toBeGreaterThan(ROUNDS);

  // Probes resume after the last restart: each 10 s resource gets an entry
  // checked after the kill, i.e. by the restarted daemon's scheduler (the
  // manual checks stopped at the kill). checkedAt has whole seconds, so the
  // entry must be from a later second than the kill.
  const d = daemon;
  const killSecond = Math.floor(lastKill / 1000) * 1000;
  await until(async () => {
    for (const id of checkable) {
      const [latest] = await d.admin.call(operations.getResourceHistory, { params: { id }, query: { limit: 1 } });
      if (!latest || Date.parse(`${latest.checkedAt}Z`) <= killSecond) return false;
    }
    return true;
  }, 250);
  const resumedAfterMs = Date.now() - lastStart;

  // The agent, which saw its daemon killed 20 times, is back and traffic flows through it
  // (its backoff may have reached 30 s, so this may take that long).
  await until(async () => (await d.admin.call(operations.getAgent, { params: { id: agentRow.id } })).status === 'CONNECTED', 250);
  const through = await edge(d.edgeUrl, 'crash.test', 'GET', '/');
  expect(through.status).toBe(200);
  expect(through.text).toBe('ok');
  expect(agent.proc.exitCode, 'the agent kept running').toBeNull();

  await d.stop('SIGTERM');
  daemon = undefined;
  const db = new Database(join(dataDir, 'monctl.db'), { readonly: true });
  try {
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
  } finally {
    db.close();
  }
  console.log(
    `crash safety: ${ROUNDS} kills in ${((Date.now() - started) / 1000).toFixed(1)} s; ` +
      `${acked.resources.size} resources, ${acked.announcementAcked} announcement updates, ` +
      `${[...acked.history.values()].reduce((n, s) => n + s.size, 0)} check entries acknowledged; probes resumed ${resumedAfterMs} ms after the last restart (interval ${INTERVAL_SECONDS} s); the agent reconnected`,
  );
}, 240_000);
