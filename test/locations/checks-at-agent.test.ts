import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { bearer, okJson, sendJson } from '../helpers/http.ts';
import { startAgent, type TestAgent, until } from '../tunnel/helpers.ts';

/**
 * Conditions and request fields at agent locations, with real processes (docs/API.md#check-locations):
 * a daemon, an agent of this build (probe protocol 2) and one that speaks protocol 1
 * (`--probe-protocol 1`), both logging at trace, and a loopback target that answers JSON and
 * wants a secret header and a bearer token.
 */
const SECRET_HEADER = 'sekrit-header-5b1e9d';
const SECRET_TOKEN = 'sekrit-token-c07a44';
let d: TestDaemon;
let dir: string;
let target: Server;
let base = '';
let health = 'UP';
const agents: Record<string, TestAgent> = {};

const call = (method: string, path: string, body?: unknown) => sendJson(d.url, method, path, body, bearer(d.adminKey));
const ok = (method: string, path: string, body?: unknown) => okJson(d.url, method, path, body, bearer(d.adminKey));
let made = 0;
const resource = (location: string, path: string, extra: Record<string, unknown> = {}) =>
  ok('POST', '/api/resources', {
    name: `r${++made}-${location}`,
    resourceType: 'HTTP',
    target: `${base}${path}`,
    intervalSeconds: 3600,
    locations: [location],
    ...extra,
  });
const checkNow = (id: number) => ok('POST', `/api/resources/${id}/check`);
const verdict = (entry: { status: string; message: string; errorCode: string | null }) => ({
  status: entry.status,
  message: entry.message,
  errorCode: entry.errorCode,
});

beforeAll(async () => {
  target = createServer((req, res) => {
    if (req.url === '/secure' && (req.headers['x-api-key'] !== SECRET_HEADER || req.headers.authorization !== `Bearer ${SECRET_TOKEN}`)) {
      res.statusCode = 401;
      return void res.end();
    }
    res.setHeader('content-type', 'application/json');
    const padding = req.url === '/big' ? 'x'.repeat(4096) : '';
    res.end(JSON.stringify({ status: health, data: [1, 2], padding }));
  });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  // A body cap that the agent must use too: /big is over it, the others under it.
  d = await startDaemon({ args: ['--max-body-bytes', '1024'] });
  dir = mkdtempSync(join(tmpdir(), 'monctl-checks-at-agent-'));
  for (const [name, extra] of [
    ['office', []],
    ['old', ['--probe-protocol', '1']],
  ] as const) {
    const { id } = await ok('POST', '/admin/api/agents', { name });
    const { token } = await ok('POST', `/admin/api/agents/${id}/token`);
    const tokenFile = join(dir, name);
    writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
    agents[name] = startAgent(d.url, tokenFile, ['--log-level', 'trace', ...extra]);
    await until(async () => (await ok('GET', `/admin/api/agents/${id}`)).status === 'CONNECTED');
  }
}, 60_000);

afterAll(async () => {
  await Promise.all(Object.values(agents).map((a) => a.stop('SIGKILL')));
  target?.closeAllConnections();
  await Promise.all([d?.stop(), target && new Promise((r) => target.close(r))]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('checks with conditions and request fields at an agent', () => {
  it('conditions give the same verdict and message at the agent as at the daemon, passing and failing', async () => {
    const conditions = ['[STATUS] == 200', '[BODY].status == UP', 'len([BODY].data) == 2'];
    const here = await resource('daemon', '/health', { conditions });
    const there = await resource('office', '/health', { conditions });
    health = 'UP';
    const up = await checkNow(here.id);
    expect(up).toMatchObject({ status: 'AVAILABLE', message: '200 OK', location: 'daemon' });
    expect(await checkNow(there.id)).toMatchObject({ ...verdict(up), location: 'office' });
    health = 'DOWN';
    const down = await checkNow(here.id);
    expect(down).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONDITION_FAILED', message: '[BODY].status (DOWN) == UP' });
    expect(await checkNow(there.id)).toMatchObject({ ...verdict(down), location: 'office' });
    health = 'UP';
  });

  it("a body over the daemon's --max-body-bytes fails the condition at the agent too, with the same message", async () => {
    const here = await resource('daemon', '/big', { conditions: ['[BODY].status == UP'] });
    const there = await resource('office', '/big', { conditions: ['[BODY].status == UP'] });
    const capped = await checkNow(here.id);
    expect(capped).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONDITION_FAILED' });
    expect(capped.message).toMatch(/over the size cap/);
    expect(await checkNow(there.id)).toMatchObject({ ...verdict(capped), location: 'office' });
  });

  it('a secret header and a bearer token reach a server that requires them, through the agent', async () => {
    const secured = await resource('office', '/secure', {
      method: 'GET',
      secretHeaders: { 'X-Api-Key': SECRET_HEADER },
      auth: { type: 'bearer', token: SECRET_TOKEN },
      conditions: ['[STATUS] == 200'],
    });
    expect(await checkNow(secured.id)).toMatchObject({ status: 'AVAILABLE', location: 'office' });
    const wrong = await resource('office', '/secure', { auth: { type: 'bearer', token: 'not-the-token' } });
    expect(await checkNow(wrong.id)).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: '401', location: 'office' });
    // Upside down at the agent too: the 401 is what is expected.
    const inverted = await resource('office', '/secure', { upsideDown: true, timeoutSeconds: 5 });
    expect(await checkNow(inverted.id)).toMatchObject({ status: 'AVAILABLE', location: 'office' });
  });

  it('an agent speaking protocol 1: a check that needs 2 is unknown with the upgrade message; plain checks still run there', async () => {
    const plain = await resource('old', '/health');
    expect(await checkNow(plain.id)).toMatchObject({ status: 'AVAILABLE', message: '200 OK', location: 'old' });
    const withConditions = await resource('old', '/health', {
      conditions: ['[BODY].status == UP'],
      secretHeaders: { 'X-Api-Key': SECRET_HEADER },
    });
    const res = await call('POST', `/api/resources/${withConditions.id}/check`);
    expect(res.status, res.text).toBe(503);
    expect(res.json().detail).toContain(
      'agent old speaks probe protocol 1; this check needs protocol 2 (conditions, request fields): upgrade the agent to run it there',
    );
    const view = await ok('GET', `/admin/api/resources/${withConditions.id}`);
    expect(view.currentStatus).toBe('unknown');
    expect(view.locationResults[0]).toMatchObject({ location: 'old', status: 'unknown' });
  });

  it("no secret in either agent's output at trace level, nor in the daemon's", async () => {
    // The checks above ran: the office agent logged each at debug, and its tunnel at trace.
    await until(() => agents.office.logs.some((l) => l.msg === 'remote check'));
    for (const out of [
      JSON.stringify(agents.office.logs) + agents.office.stderr(),
      JSON.stringify(agents.old.logs) + agents.old.stderr(),
      JSON.stringify(d.logs) + d.stderr(),
    ]) {
      expect(out).not.toContain(SECRET_HEADER);
      expect(out).not.toContain(SECRET_TOKEN);
    }
  });
});
