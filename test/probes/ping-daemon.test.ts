import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { bearer, okJson } from '../helpers/http.ts';
import { startAgent, type TestAgent, until } from '../tunnel/helpers.ts';
import { createNetNs, type NetNs } from './helpers/netns.ts';

/**
 * PING resources end to end, with real processes: a daemon and an agent (location `office`), both
 * in the root network namespace, pinging loopback and an address of a namespace whose nftables
 * drops every echo (docs/API.md#check-types). The verdict at the agent is the daemon's.
 */
const ANSWERS = 2;
const DROPS_ALL = 3;
let d: TestDaemon;
let agent: TestAgent;
let dir: string;
let ns: NetNs;
let made = 0;

const ok = (method: string, path: string, body?: unknown) => okJson(d.url, method, path, body, bearer(d.adminKey));
const resource = (location: string, target: string, extra: Record<string, unknown> = {}) =>
  ok('POST', '/api/resources', {
    name: `ping-${++made}`,
    resourceType: 'PING',
    target,
    intervalSeconds: 3600,
    locations: [location],
    ...extra,
  });
const checkNow = (id: number) => ok('POST', `/api/resources/${id}/check`);

beforeAll(async () => {
  ns = createNetNs({
    lastOctets: [ANSWERS, DROPS_ALL],
    nft: (n) => `table inet pingtest {
      chain input { type filter hook input priority 0; policy accept; ip daddr ${n.ip(DROPS_ALL)} icmp type echo-request drop; }
    }`,
  });
  d = await startDaemon();
  dir = mkdtempSync(join(tmpdir(), 'monctl-ping-daemon-'));
  const { id } = await ok('POST', '/admin/api/agents', { name: 'office' });
  const { token } = await ok('POST', `/admin/api/agents/${id}/token`);
  writeFileSync(join(dir, 'office'), `${token}\n`, { mode: 0o600 });
  agent = startAgent(d.url, join(dir, 'office'));
  await until(async () => (await ok('GET', `/admin/api/agents/${id}`)).status === 'CONNECTED');
}, 60_000);

afterAll(async () => {
  await agent?.stop('SIGKILL');
  await d?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
  ns?.remove();
});

describe('PING resources through the daemon and at an agent', () => {
  it('loopback answers at both locations; the options are stored with their defaults', async () => {
    const options = { count: 4, intervalMs: 20 };
    for (const location of ['daemon', 'office']) {
      for (const target of ['127.0.0.1', '::1']) {
        const r = await resource(location, target, { ping: options, conditions: ['[PACKET_LOSS] == 0', '[CONNECTED] == true'] });
        expect(await ok('GET', `/admin/api/resources/${r.id}`)).toMatchObject({ ping: { ...options, family: 'auto' } });
        const result = await checkNow(r.id);
        expect(result, `${target} at ${location}`).toMatchObject({ status: 'AVAILABLE', errorCode: null, location });
        expect(result.message).toMatch(
          new RegExp(`^4 of 4 echoes came back from ${target.replaceAll('.', '\\.')} \\(0 % lost\\), average [\\d.]+ ms$`),
        );
      }
    }
  });

  it('an address whose echoes are dropped: the same PING_FAILED at the daemon and at the agent, in the history', async () => {
    const target = ns.ip(DROPS_ALL);
    const verdicts = [];
    for (const location of ['daemon', 'office']) {
      const r = await resource(location, target, { ping: { count: 2, intervalMs: 20 }, timeoutSeconds: 1 });
      const result = await checkNow(r.id);
      verdicts.push({ status: result.status, message: result.message, errorCode: result.errorCode });
      const history = await ok('GET', `/api/resources/${r.id}/history`);
      expect(JSON.stringify(history)).toContain(`no reply to 2 echoes from ${target}`);
    }
    expect(verdicts[0]).toEqual({ status: 'NOT_AVAILABLE', message: `no reply to 2 echoes from ${target}`, errorCode: 'PING_FAILED' });
    expect(verdicts[1]).toEqual(verdicts[0]);
    // The namespace's other address answers the agent: the drop is nftables', not the route's.
    expect(await checkNow((await resource('office', ns.ip(ANSWERS))).id)).toMatchObject({ status: 'AVAILABLE' });
  });

  it('resources/test reports [PACKET_LOSS] and [IP] against what was seen', async () => {
    const tested = await ok('POST', '/admin/api/resources/test', {
      resourceType: 'PING',
      target: '127.0.0.1',
      ping: { count: 2, intervalMs: 20 },
      conditions: ['[PACKET_LOSS] < 50', '[IP] == 127.0.0.1', '[RESPONSE_TIME] < 1000'],
    });
    expect(tested).toMatchObject({ status: 'AVAILABLE' });
    expect(tested.report.conditions.map((c: { message: string }) => c.message)).toEqual([
      '[PACKET_LOSS] (0) < 50',
      '[IP] (127.0.0.1) == 127.0.0.1',
      expect.stringMatching(/^\[RESPONSE_TIME\] \(\d+\) < 1000$/),
    ]);
  });
});
