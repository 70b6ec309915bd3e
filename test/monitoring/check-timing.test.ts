import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { until } from '../helpers/http.ts';
import { call, ok, tcpListener } from './helpers.ts';

// Timing on every check (docs/API.md#check-timing): the latest detail carries the phases, and the
// metrics have a histogram per phase without a series per resource.
let d: TestDaemon;
let web: Server;
let base: string;
let tcp: Awaited<ReturnType<typeof tcpListener>>;

beforeAll(async () => {
  web = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
  await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
  [d, tcp] = await Promise.all([startDaemon(), tcpListener()]);
});

afterAll(async () => {
  await Promise.all([d?.stop(), tcp?.close()]);
  web?.closeAllConnections();
  await new Promise((r) => web?.close(r));
});

const admin = () => ({ kind: 'key' as const, token: d.adminKey });

/** Creates an active resource (due at once) and waits for its first scheduled check; the admin detail. */
async function checked(name: string, resourceType: 'HTTP' | 'TCP', target: string): Promise<any> {
  const { id } = await ok(call(d, admin(), 'POST', '/api/resources', { name, resourceType, target, intervalSeconds: 3600 }));
  let detail: any;
  await until(async () => {
    detail = await ok(call(d, admin(), 'GET', `/admin/api/resources/${id}`));
    return detail.latestCheckedAt !== null;
  });
  return detail;
}

describe('timing on every check', () => {
  it('the admin detail carries the latest phases of an HTTP check, and its location result too', async () => {
    const detail = await checked('web', 'HTTP', `${base}/`);
    const t = detail.latestTiming;
    expect(Object.keys(t).sort()).toEqual(['connectMs', 'dnsMs', 'firstByteMs', 'tlsMs', 'totalMs']);
    expect(t.connectMs).toBeGreaterThanOrEqual(0); // a new connection
    expect(t.tlsMs).toBeNull(); // plain HTTP
    expect(t.firstByteMs).toBeGreaterThanOrEqual(0);
    expect(t.totalMs).toBeGreaterThanOrEqual(t.firstByteMs);
    expect(detail.locationResults).toEqual([expect.objectContaining({ location: 'daemon', timing: t })]);
    const listed = (await ok(call(d, admin(), 'GET', '/admin/api/resources'))).find((r: any) => r.id === detail.id);
    expect(listed.latestTiming).toEqual(t);
  });

  it('a TCP check has a connect but no first byte; a check now records its timing as well', async () => {
    const detail = await checked('port', 'TCP', tcp.target);
    expect(detail.latestTiming).toMatchObject({ tlsMs: null, firstByteMs: null });
    expect(detail.latestTiming.connectMs).toBeGreaterThanOrEqual(0);
    await ok(call(d, admin(), 'POST', `/api/resources/${detail.id}/check`));
    const again = await ok(call(d, admin(), 'GET', `/admin/api/resources/${detail.id}`));
    expect(again.latestCheckedAt >= detail.latestCheckedAt).toBe(true);
    expect(again.latestTiming.connectMs).toBeGreaterThanOrEqual(0);
  });

  it('the metrics have a histogram per phase, by type and location, without a series per resource', async () => {
    await checked('web-2', 'HTTP', `${base}/two`);
    const text = (await d.admin.raw('GET', '/actuator/prometheus')).text;
    for (const phase of ['connect', 'first_byte', 'total'])
      expect(text).toMatch(new RegExp(`^monctl_check_phase_seconds_count\\{phase="${phase}",type="HTTP",location="daemon"\\} [1-9]`, 'm'));
    expect(text).toMatch(/^monctl_check_phase_seconds_count\{phase="connect",type="TCP",location="daemon"\} [1-9]/m);
    // Plain HTTP has no TLS, and TCP no first byte: those phases are left out, not observed as 0.
    expect(text).not.toMatch(/^monctl_check_phase_seconds_count\{phase="tls"/m);
    expect(text).not.toMatch(/^monctl_check_phase_seconds_count\{phase="first_byte",type="TCP"/m);
    expect(text.split('\n').filter((l) => l.startsWith('monctl_check_phase_seconds') && l.includes('resource_id'))).toEqual([]);
    const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(check.stdout + check.stderr).toBe('');
  });

  it('--metrics-detail all (the default) adds the last phases per resource, removed with the resource', async () => {
    const { id } = await checked('web-3', 'HTTP', `${base}/three`);
    const series = (text: string) =>
      text.split('\n').filter((l) => l.startsWith(`monctl_resource_last_check_phase_seconds{resource_id="${id}"`));
    const before = series((await d.admin.raw('GET', '/actuator/prometheus')).text);
    expect(before).toContainEqual(expect.stringMatching(/,type="HTTP",location="daemon",phase="total"\} [0-9.e-]+$/));
    expect(before.some((l) => l.includes('phase="tls"'))).toBe(false);
    await ok(call(d, admin(), 'DELETE', `/api/resources/${id}`));
    expect(series((await d.admin.raw('GET', '/actuator/prometheus')).text)).toEqual([]);
  });

  it('--metrics-detail public: the phase histogram, and no series per resource', async () => {
    const other = await startDaemon({ args: ['--metrics-detail', 'public'] });
    try {
      const key = { kind: 'key' as const, token: other.adminKey };
      const { id } = await ok(
        call(other, key, 'POST', '/api/resources', { name: 'p', resourceType: 'HTTP', target: `${base}/p`, intervalSeconds: 3600 }),
      );
      await until(async () => (await ok(call(other, key, 'GET', `/admin/api/resources/${id}`))).latestCheckedAt !== null);
      const text = (await other.admin.raw('GET', '/actuator/prometheus')).text;
      expect(text).toMatch(/^monctl_check_phase_seconds_count\{phase="total",type="HTTP",location="daemon"\} [1-9]/m);
      expect(text).not.toContain('monctl_resource_last_check_phase_seconds{');
    } finally {
      await other.stop();
    }
  });
});
