import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { bearer, okJson, sendJson } from '../helpers/http.ts';
import { buildLayout, type Layout, push } from '../probes/helpers/images.ts';
import { type Registry, startRegistry } from '../probes/helpers/registry.ts';
import { freePort } from '../helpers/free-port.ts';
import { startAgent, type TestAgent, until } from '../tunnel/helpers.ts';
import {
  createPrivateNetwork,
  namespacesWork,
  type PrivateNetwork,
  type Site,
  type SiteTarget,
  startSiteTarget,
} from './private-network.ts';

/**
 * Checks from where the service lives (issue 19), with real processes: a
 * daemon on the host, agents inside two network namespaces ("sites", see
 * private-network.ts), and targets on each site's own 127.0.0.1, which the
 * daemon cannot reach. The daemon listens on the host's bridge address, the
 * one address the sites can dial.
 */
let net: PrivateNetwork;
let d: TestDaemon;
let dir: string;
let siteA: Site;
let siteB: Site;
let targetA: SiteTarget;
let targetB: SiteTarget;
const agents: Record<string, { id: number; tokenFile: string; proc?: TestAgent }> = {};

const call = (method: string, path: string, body?: unknown) => sendJson(d.url, method, path, body, bearer(d.adminKey));
const ok = (method: string, path: string, body?: unknown) => okJson(d.url, method, path, body, bearer(d.adminKey));
const resource = (name: string, target: string, extra: Record<string, unknown>) =>
  ok('POST', '/api/resources', { name, resourceType: 'HTTP', target, intervalSeconds: 3600, ...extra });
const checkNow = (id: number) => ok('POST', `/api/resources/${id}/check`);
const detail = (id: number) => ok('GET', `/admin/api/resources/${id}`);

/** `monctl agent` inside a site (or on the host), logging everything it logs (trace). */
function runAgent(name: string, site: Site | undefined, extra: string[] = []): TestAgent {
  const args = ['--log-level', 'trace', ...extra];
  const agent = site
    ? wrapSite(site, [join(ROOT, 'bin/monctl'), 'agent', '--server', d.url, '--token-file', agents[name].tokenFile, ...args])
    : startAgent(d.url, agents[name].tokenFile, args);
  agents[name].proc = agent;
  return agent;
}

/** startAgent's TestAgent for a process inside a site. */
function wrapSite(site: Site, argv: string[]): TestAgent {
  const proc = site.spawn(argv[0], argv.slice(1));
  const logs: Array<Record<string, unknown>> = [];
  let stderr = '';
  let raw = '';
  proc.stderr!.on('data', (c) => (stderr += c));
  proc.stdout!.on('data', (c) => {
    raw += c;
    for (const line of String(c).split('\n').filter(Boolean)) {
      try {
        logs.push(JSON.parse(line));
      } catch {
        logs.push({ raw: line });
      }
    }
  });
  const exited = new Promise<number | string | null>((resolve) => proc.once('exit', (code, signal) => resolve(code ?? signal)));
  return {
    proc,
    logs,
    stderr: () => `${stderr}\n${raw}`,
    exited,
    stop(signal = 'SIGTERM') {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      return exited;
    },
  };
}

const waitStatus = (name: string, status: string) =>
  until(async () => (await ok('GET', `/admin/api/agents/${agents[name].id}`)).status === status);

beforeAll(async () => {
  if (!namespacesWork())
    throw new Error('these tests need network namespaces: run them as root on Linux with iproute2 (apt-get install iproute2)');
  net = createPrivateNetwork(2);
  [siteA, siteB] = net.sites;
  d = await startDaemon({ args: ['--listen', `${net.hostAddress}:0`, '--http-timeout', '3s'] });
  dir = mkdtempSync(join(tmpdir(), 'monctl-locations-'));
  for (const name of ['agent-a', 'agent-b', 'old-agent']) {
    const { id } = await ok('POST', '/admin/api/agents', { name });
    const { token } = await ok('POST', `/admin/api/agents/${id}/token`);
    const tokenFile = join(dir, name);
    writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
    agents[name] = { id, tokenFile };
  }
  runAgent('agent-a', siteA);
  runAgent('agent-b', siteB);
  await Promise.all([waitStatus('agent-a', 'CONNECTED'), waitStatus('agent-b', 'CONNECTED')]);
  // The same port on both sites, free on the host too: the daemon finds nothing there.
  const port = await freePort();
  [targetA, targetB] = await Promise.all([startSiteTarget(siteA, port), startSiteTarget(siteB, port)]);
}, 60_000);

afterAll(async () => {
  await Promise.all(Object.values(agents).map((a) => a.proc?.stop('SIGKILL')));
  await Promise.all([targetA?.close(), targetB?.close(), d?.stop()]);
  net?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("checks from the agent's side of a private network", () => {
  it('a target only the agent reaches: AVAILABLE through the agent, NOT_AVAILABLE from the daemon', async () => {
    const there = await resource('site-a-via-agent', targetA.url, { locations: ['agent-a'] });
    const here = await resource('site-a-via-daemon', targetA.url, { locations: ['daemon'] });
    expect(await checkNow(there.id)).toMatchObject({ status: 'AVAILABLE', message: '200 OK', location: 'agent-a' });
    const fromDaemon = await checkNow(here.id);
    expect(fromDaemon).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONNECTION_ERROR', location: 'daemon' });
    expect(fromDaemon.message).toMatch(/ECONNREFUSED/);

    const view = await detail(there.id);
    expect(view).toMatchObject({ currentStatus: 'available', locations: ['agent-a'], quorum: 'majority', latestCheckStatus: 'AVAILABLE' });
    expect(view.locationResults).toEqual([
      expect.objectContaining({ location: 'agent-a', agentId: agents['agent-a'].id, status: 'available', message: '200 OK' }),
    ]);
    const history = await ok('GET', `/api/resources/${there.id}/history`);
    expect(history.length).toBeGreaterThan(0);
    expect(new Set(history.map((h: { location: string }) => h.location))).toEqual(new Set(['agent-a']));

    // Probe metrics carry the location; the topology shows the agent's probe load.
    const metrics = (await call('GET', '/actuator/prometheus')).text;
    expect(metrics).toMatch(/^monctl_checks_total\{type="HTTP",location="agent-a",status="AVAILABLE"\} [1-9]/m);
    expect(metrics).toMatch(new RegExp(`^monctl_resource_status\\{resource_id="${there.id}",type="HTTP",location="agent-a"\\} 1$`, 'm'));
    expect(metrics).toMatch(/^monctl_scheduler_lag_seconds_count\{location="agent-a"\} [1-9]/m);
    const topology = await ok('GET', '/admin/api/topology');
    expect(topology.probes.find((p: { agentId: number }) => p.agentId === agents['agent-a'].id)).toMatchObject({ inFlight: 0, skipped: 0 });
    expect(topology.probes.find((p: { agentId: number }) => p.agentId === agents['agent-a'].id).checksPerMinute).toBeGreaterThan(0);
  });

  it('TCP from the agent too, the agent given by its id: reached at agent-a, refused at the daemon', async () => {
    const port = new URL(targetA.url).port;
    const r = await ok('POST', '/api/resources', {
      name: 'site-a-tcp',
      resourceType: 'TCP',
      target: `127.0.0.1:${port}`,
      intervalSeconds: 3600,
      locations: [agents['agent-a'].id, 'daemon'],
      quorum: 'all',
    });
    await checkNow(r.id);
    const view = await detail(r.id);
    expect(view).toMatchObject({ locations: ['agent-a', 'daemon'], quorum: 'all', currentStatus: 'available' }); // down at 1 of 2: not all
    expect(view.locationResults.map((l: { location: string; status: string }) => `${l.location} ${l.status}`)).toEqual([
      'agent-a available',
      'daemon not_available',
    ]);
  });

  it('quorum any: down when any location fails; majority over three locations follows the majority', async () => {
    const any = await resource('quorum-any', targetA.url, { locations: ['agent-a', 'daemon'], quorum: 'any' });
    await checkNow(any.id);
    const anyView = await detail(any.id);
    expect(anyView.currentStatus).toBe('not_available');
    expect(anyView.locationResults.map((l: { location: string; status: string }) => `${l.location} ${l.status}`)).toEqual([
      'agent-a available',
      'daemon not_available',
    ]);
    // One history entry per location and check. The check a new resource gets at once and the
    // check-now may be one round or two (a loaded machine finishes the first before the second
    // is asked): each round adds one entry per location.
    const locations = (await ok('GET', `/api/resources/${any.id}/history`)).map((h: { location: string }) => h.location);
    const rounds = locations.length / 2;
    expect([1, 2]).toContain(rounds);
    expect(locations.sort()).toEqual([...Array(rounds).fill('agent-a'), ...Array(rounds).fill('daemon')]);

    const three = ['agent-a', 'agent-b', 'daemon'];
    const majority = await resource('quorum-majority', targetA.url, { locations: three });
    const all = await resource('quorum-all', targetA.url, { locations: three, quorum: 'all' });
    await Promise.all([checkNow(majority.id), checkNow(all.id)]);
    expect((await detail(majority.id)).currentStatus).toBe('available'); // down only at the daemon: 1 of 3
    targetB.setStatus(503);
    try {
      await Promise.all([checkNow(majority.id), checkNow(all.id)]);
      const down = await detail(majority.id);
      expect(down.currentStatus).toBe('not_available'); // down at agent-b and the daemon: 2 of 3
      expect(down.latestMessage).toMatch(
        /^down: down at 2 of 3 locations \(quorum majority\); agent-a: up; agent-b: 503 Service Unavailable; daemon: /,
      );
      expect(down.locationResults.find((l: { location: string }) => l.location === 'agent-b')).toMatchObject({
        status: 'not_available',
        errorCode: '503',
      });
      expect((await detail(all.id)).currentStatus).toBe('available'); // agent-a still reaches it
    } finally {
      targetB.setStatus(200);
    }
    await checkNow(majority.id);
    expect((await detail(majority.id)).currentStatus).toBe('available');
  });

  it('DOCKER from the agent against a registry only it reaches, with stored credentials that never reach its logs', async () => {
    const cred = { username: 'site-robot', password: 'site-registry-password-7f3a' };
    let layout: Layout | undefined;
    let pushed: Registry | undefined;
    let registry: Registry | undefined;
    try {
      // Pushed through a registry on the host, then served from site A alone (same storage).
      layout = buildLayout();
      pushed = await startRegistry();
      await push(layout, 'app', `${pushed.host}/private/app:1`);
      registry = await startRegistry({ kind: 'htpasswd', ...cred }, undefined, {
        storage: pushed.storage,
        spawn: (command, args) => siteA.spawn(command, args),
        accepts: async (port) =>
          spawnSync('ip', ['netns', 'exec', siteA.name, 'bash', '-c', `exec 3<>/dev/tcp/127.0.0.1/${port}`]).status === 0,
      });
      const image = `${registry.host}/private/app:1`;
      const stored = await ok('POST', '/admin/api/registry-credentials', { registry: registry.host, ...cred });
      const there = await ok('POST', '/api/resources', {
        name: 'image-via-agent',
        resourceType: 'DOCKER',
        target: image,
        intervalSeconds: 3600,
        locations: ['agent-a'],
      });
      const here = await ok('POST', '/api/resources', {
        name: 'image-via-daemon',
        resourceType: 'DOCKER',
        target: image,
        intervalSeconds: 3600,
      });
      const up = await checkNow(there.id);
      expect(up).toMatchObject({ status: 'AVAILABLE', location: 'agent-a' });
      expect(up.message).toMatch(/^pullable: private\/app:1/);
      expect(await checkNow(here.id)).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'DOCKER_ERROR', location: 'daemon' });

      // The agent keeps nothing: without the daemon's credential its next check is refused.
      await ok('DELETE', `/admin/api/registry-credentials/${stored.id}`);
      const refused = await checkNow(there.id);
      expect(refused).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'DOCKER_ERROR', location: 'agent-a' });
      expect(refused.message).toMatch(/^auth: .*requires a username and password; none stored/);

      const basic = Buffer.from(`${cred.username}:${cred.password}`).toString('base64');
      const agentOutput = agents['agent-a'].proc!.stderr() + JSON.stringify(agents['agent-a'].proc!.logs);
      // It logged the DOCKER checks (debug), and nothing of the credential they carried.
      expect(agents['agent-a'].proc!.logs.filter((l) => l.msg === 'remote check' && l.type === 'DOCKER').length).toBeGreaterThanOrEqual(2);
      for (const secret of [cred.password, basic]) {
        expect(agentOutput).not.toContain(secret);
        expect(d.stderr() + JSON.stringify(d.logs)).not.toContain(secret);
      }
    } finally {
      await registry?.stop();
      await pushed?.stop();
      layout?.remove();
    }
  }, 60_000);

  it('an agent without probe support (protocol version flag 0) gives unknown with a clear reason', async () => {
    const old = runAgent('old-agent', undefined, ['--probe-protocol', '0']);
    await waitStatus('old-agent', 'CONNECTED');
    const r = await resource('via-old-agent', targetA.url, { locations: ['old-agent'] });
    const res = await call('POST', `/api/resources/${r.id}/check`);
    expect(res.status).toBe(503);
    expect(res.json().detail).toMatch(/agent old-agent \(monctl [^)]+\) does not support remote checks: upgrade it to run checks there/);
    const view = await detail(r.id);
    expect(view).toMatchObject({ currentStatus: 'unknown', latestCheckStatus: null });
    expect(view.locationResults).toEqual([
      expect.objectContaining({ location: 'old-agent', status: 'unknown', errorCode: 'LOCATION_UNAVAILABLE' }),
    ]);
    expect(view.locationResults[0].message).toMatch(/does not support remote checks/);
    expect(await ok('GET', `/api/resources/${r.id}/history`)).toEqual([]);
    await old.stop('SIGKILL');
  });

  it('the agent killed: its checks turn unknown and no incident opens; restarted, scheduled checks resume without a daemon restart', async () => {
    const r = await resource('scheduled-via-agent', targetA.url, { locations: ['agent-a'], intervalSeconds: 10 });
    const last = await until(async () => (await ok('GET', `/api/resources/${r.id}/history?limit=1`))[0]);
    expect(last).toMatchObject({ status: 'AVAILABLE', location: 'agent-a' });

    await agents['agent-a'].proc!.stop('SIGKILL');
    await waitStatus('agent-a', 'DISCONNECTED');
    for (let i = 0; i < 4; i++) {
      // past the failure threshold (3)
      const res = await call('POST', `/api/resources/${r.id}/check`);
      expect(res.status).toBe(503);
      expect(res.json().detail).toMatch(/agent agent-a is not connected/);
    }
    const down = await detail(r.id);
    expect(down).toMatchObject({ currentStatus: 'unknown', latestCheckStatus: 'AVAILABLE' });
    expect(down.locationResults).toEqual([
      expect.objectContaining({ location: 'agent-a', status: 'unknown', message: 'agent agent-a is not connected' }),
    ]);
    expect(down.incidents).toEqual([]);
    const incidents = await ok('GET', `/admin/api/incidents?resourceId=${r.id}`);
    expect(incidents).toEqual([]);
    expect((await ok('GET', `/api/resources/${r.id}/history?limit=1`))[0].id).toBe(last.id); // no NOT_AVAILABLE written

    const pid = d.proc.pid;
    runAgent('agent-a', siteA);
    await waitStatus('agent-a', 'CONNECTED');
    // The next scheduled round (no check asked for) goes through the new session.
    const resumed = await until(async () => {
      const [entry] = await ok('GET', `/api/resources/${r.id}/history?limit=1`);
      return entry.id > last.id ? entry : undefined;
    }, 250);
    expect(resumed).toMatchObject({ status: 'AVAILABLE', location: 'agent-a' });
    expect((await detail(r.id)).currentStatus).toBe('available');
    expect(d.proc.pid).toBe(pid);
    expect(d.proc.exitCode).toBeNull();
  }, 60_000);
});
