import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { stream } from '../cluster/sse-stream.ts';
import { tempHome } from '../cli/run.ts';
import { ROOT, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { bearer, type CookieJar, login, send, until } from '../helpers/http.ts';

const EVENTS = '/api/events';
const TOPOLOGY = '/admin/sse/topology';
const routeLog = (id: number) => `/admin/sse/routes/${id}/log`;

/** Opens a stream and waits until it is live (its SNAPSHOT, or for the route log, which has none, its headers). */
async function open(d: TestDaemon, path: string, auth: string | Record<string, string>) {
  const s = stream(d.url, path, auth);
  await until(() => s.ended || (path.includes('/log') ? s.status !== undefined : s.kinds().includes('SNAPSHOT')));
  expect(s.status).toBe(200);
  expect(s.ended).toBe(false);
  return s;
}

/** The status a reconnect with the same credential gets (a refusal answers at once, with a problem). */
async function reconnect(d: TestDaemon, path: string, headers: Record<string, string>): Promise<number> {
  return (await send(d.url, 'GET', path, { headers })).status;
}

/**
 * Issue 25: a live stream ends as soon as its credential stops granting what
 * it granted when the stream opened (key revoked or expired, user demoted or
 * deleted, session logged out), and the reconnect is refused. Each trigger on
 * one endpoint at least, and each endpoint once at least.
 */
describe('streams end with their credentials', () => {
  let d: TestDaemon;
  let routeId: number;

  beforeAll(async () => {
    d = await startDaemon();
    const agent = await d.admin.call(operations.createAgent, { body: { name: 'creds-agent' } });
    const route = await d.admin.call(operations.createRoute, {
      body: { name: 'creds-route', type: 'HTTP', agentId: agent.id, hostname: 'creds.test', target: 'http://127.0.0.1:9/' },
    });
    routeId = route.id;
  }, 30_000);
  afterAll(async () => {
    await d?.stop();
  });

  const key = async (name: string, role: 'ADMIN' | 'USER', expiresAt?: string) =>
    d.admin.call(operations.createApiKey, { body: { name, role, ...(expiresAt ? { expiresAt } : {}) } });
  const user = async (username: string, role: 'ADMIN' | 'USER') =>
    d.admin.call(operations.createUser, { body: { username, password: `${username}-password-1`, role } });
  const session = async (username: string): Promise<{ jar: CookieJar; csrf: string }> => login(d.url, username, `${username}-password-1`);

  it('a revoked ADMIN key stops receiving the route log, and a revoked USER key its events; other streams go on', async () => {
    const admin = await key('revoked-admin', 'ADMIN');
    const plain = await key('revoked-user', 'USER');
    const bystander = await key('bystander', 'ADMIN');
    const log = await open(d, routeLog(routeId), admin.token);
    const events = await open(d, EVENTS, plain.token);
    const other = await open(d, routeLog(routeId), bystander.token);

    await d.admin.call(operations.revokeApiKey, { params: { id: admin.id } });
    await log.done;
    await d.admin.call(operations.revokeApiKey, { params: { id: plain.id } });
    await events.done;
    expect(other.ended).toBe(false); // checked twice meanwhile, and its key still stands

    expect(await reconnect(d, routeLog(routeId), bearer(admin.token))).toBe(401);
    expect(await reconnect(d, EVENTS, bearer(plain.token))).toBe(401);
    await other.close();
  }, 30_000);

  it('a key that expires while its topology stream is open ends it at expiry', async () => {
    const expiresAt = Date.now() + 3_000;
    const short = await key('short-lived', 'ADMIN', new Date(expiresAt).toISOString());
    const topology = await open(d, TOPOLOGY, short.token);
    await topology.done;
    // No earlier than the expiry (the stream had nothing else to end it), and refused from then on.
    expect(Date.now()).toBeGreaterThanOrEqual(expiresAt - 50);
    expect(await reconnect(d, TOPOLOGY, bearer(short.token))).toBe(401);
  }, 30_000);

  it('demoting a user ends the topology stream of their ADMIN key, and the reconnect is forbidden', async () => {
    const dora = await user('dora', 'ADMIN');
    const { jar, csrf } = await session('dora');
    const created = await send(d.url, 'POST', '/admin/api/api-keys', {
      headers: { ...jar.header(), 'x-csrf-token': csrf, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'dora-key' }),
    });
    const token = created.json().token as string;
    const topology = await open(d, TOPOLOGY, token);
    await d.admin.call(operations.updateUser, { params: { id: dora.id }, body: { role: 'USER' } });
    await topology.done;
    expect(await reconnect(d, TOPOLOGY, bearer(token))).toBe(403);
  }, 30_000);

  it('deleting a user ends the route-log stream of their session', async () => {
    const del = await user('del', 'ADMIN');
    const { jar } = await session('del');
    const log = await open(d, routeLog(routeId), jar.header());
    await d.admin.call(operations.deleteUser, { params: { id: del.id } });
    await log.done;
    expect(await reconnect(d, routeLog(routeId), jar.header())).toBe(401);
  }, 30_000);

  it("logging out ends the session's event stream", async () => {
    await user('lou', 'USER');
    const { jar, csrf } = await session('lou');
    const events = await open(d, EVENTS, jar.header());
    const out = await send(d.url, 'POST', '/logout', { headers: { ...jar.header(), 'x-csrf-token': csrf } });
    expect(out.status).toBe(302);
    await events.done;
    expect(await reconnect(d, EVENTS, jar.header())).toBe(401);
  }, 30_000);
});

/** The daemon's count of streams it ended for `reason`, from its metrics. */
async function endedFor(d: TestDaemon, reason: string): Promise<number> {
  const text = (await send(d.url, 'GET', '/actuator/prometheus')).text;
  const match = new RegExp(`^monctl_sse_streams_ended_total\\{reason="${reason}"\\} (\\d+)`, 'm').exec(text);
  return match ? Number(match[1]) : NaN;
}

/** `monctl <args>` left running (a --watch), piped as in a script, against `d` with `key`. */
function watchCli(d: TestDaemon, key: string, home: string, args: string[]) {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !/^(MONCTL_|XDG_|NO_COLOR)/.test(k)) env[k] = v;
  Object.assign(env, { MONCTL_SERVER: d.url, MONCTL_API_KEY: key, MONCTL_CONFIG_DIR: home, XDG_DATA_HOME: join(home, 'nodata') });
  const child = spawn(join(ROOT, 'bin/monctl'), args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const out = { stdout: '', stderr: '', code: undefined as number | null | undefined };
  child.stdout.on('data', (c) => (out.stdout += c));
  child.stderr.on('data', (c) => (out.stderr += c));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve((out.code = code))));
  const kinds = () =>
    out.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => (JSON.parse(line) as { event: string }).event);
  return { out, exited, kinds, kill: () => child.kill('SIGTERM') };
}

/**
 * Every authenticated stream ends at --stream-max-lifetime, and the client
 * reconnects: the raw stream resumes with Last-Event-ID, and the CLI's
 * `--watch` goes on by itself; once its key is revoked, its reconnect is
 * refused and it says so and exits non-zero instead of retrying.
 */
describe('the maximum lifetime of a stream', () => {
  let d: TestDaemon;
  let home: ReturnType<typeof tempHome>;

  beforeAll(async () => {
    home = tempHome();
    d = await startDaemon({ args: ['--stream-max-lifetime', '2s'] });
  }, 30_000);
  afterAll(async () => {
    await d?.stop();
    home?.cleanup();
  });

  it('ends a stream whose credential still stands, and the reconnect resumes', async () => {
    const { token } = await d.admin.call(operations.createApiKey, { body: { name: 'long-lived', role: 'USER' } });
    const before = await endedFor(d, 'lifetime');
    const events = await open(d, EVENTS, token);
    await events.done;
    expect(await endedFor(d, 'lifetime')).toBe(before + 1);
    expect(await endedFor(d, 'credentials')).toBe(0);
    const resumed = stream(d.url, EVENTS, token, events.events[0].id);
    await until(() => resumed.status !== undefined);
    expect(resumed.status).toBe(200);
    await resumed.close();
  }, 30_000);

  it('the CLI reconnects by itself after a server-ended stream, and exits non-zero once its key is revoked', async () => {
    const key = await d.admin.call(operations.createApiKey, { body: { name: 'cli-watch', role: 'ADMIN' } });
    const cli = watchCli(d, key.token, home.dir, ['topology', '--watch']);
    try {
      await until(() => cli.kinds().includes('SNAPSHOT') || cli.out.code !== undefined);
      const ended = await endedFor(d, 'lifetime');
      await until(async () => (await endedFor(d, 'lifetime')) > ended || cli.out.code !== undefined);
      // Ended by the server, reconnected by the CLI: what happens next still reaches it.
      await d.admin.call(operations.createAgent, { body: { name: 'after-reconnect' } });
      await until(() => cli.kinds().includes('AGENT_CREATED') || cli.out.code !== undefined);
      expect(cli.out.code, cli.out.stderr).toBeUndefined();
      expect(cli.out.stderr).toContain('reconnecting');

      await d.admin.call(operations.revokeApiKey, { params: { id: key.id } });
      expect(await cli.exited).toBe(4);
      expect(cli.out.stderr).toMatch(/HTTP 401: the API key or session is not valid \(any more\)/);
      expect(cli.out.stderr).toContain('hint: the credential is missing, expired or revoked');
    } finally {
      cli.kill();
    }
  }, 60_000);
});
