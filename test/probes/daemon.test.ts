import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { buildLayout, type Layout, push } from './helpers/images.ts';
import { type Registry, startRegistry } from './helpers/registry.ts';

// The probe engine inside the real daemon: scheduled checks, the on-demand
// check with stored registry credentials, and the metrics it exports.
let daemon: TestDaemon;
let web: Server;
let webUrl: string;
let registry: Registry;
let layout: Layout;
const cred = { username: 'puller', password: 'puller-password-1' };

beforeAll(async () => {
  web = createServer((req, res) => res.writeHead(req.url === '/down' ? 503 : 200).end());
  await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
  webUrl = `http://127.0.0.1:${(web.address() as { port: number }).port}`;
  layout = buildLayout();
  registry = await startRegistry({ kind: 'htpasswd', ...cred });
  await push(layout, 'app', `${registry.host}/private/app:1`, { creds: `${cred.username}:${cred.password}` });
  daemon = await startDaemon({ env: { MONCTL_HTTP_TIMEOUT: '2000' } });
});

afterAll(async () => {
  await daemon?.stop();
  await registry?.stop();
  layout?.remove();
  web?.closeAllConnections();
  await new Promise((r) => web?.close(r));
});

async function post(path: string, body: unknown): Promise<any> {
  return JSON.parse((await daemon.admin.raw('POST', path, JSON.stringify(body))).text);
}

async function history(id: number): Promise<any[]> {
  return JSON.parse((await daemon.admin.raw('GET', `/api/resources/${id}/history`)).text);
}

async function until<T>(fn: () => Promise<T | undefined>, what: string): Promise<T> {
  for (let i = 0; i < 300; i++) {
    const value = await fn();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`gave up waiting for ${what}`);
}

describe('the probe engine in the daemon', () => {
  it('checks a new resource at once on its own, and records the result', async () => {
    const up = await post('/api/resources', { name: 'web-up', resourceType: 'HTTP', target: `${webUrl}/`, intervalSeconds: 3600 });
    const down = await post('/api/resources', { name: 'web-down', resourceType: 'HTTP', target: `${webUrl}/down`, intervalSeconds: 3600 });
    const [upEntry] = await until(async () => ((await history(up.id)).length ? history(up.id) : undefined), 'a scheduled check');
    expect(upEntry).toMatchObject({ status: 'AVAILABLE', errorCode: null });
    const [downEntry] = await until(async () => ((await history(down.id)).length ? history(down.id) : undefined), 'a scheduled check');
    expect(downEntry).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: '503', message: '503 Service Unavailable' });
    const detail = JSON.parse((await daemon.admin.raw('GET', `/admin/api/resources/${down.id}`)).text);
    expect(detail.currentStatus).toBe('not_available');
  });

  it('a DOCKER check uses the stored registry credentials', async () => {
    const res = await post('/api/resources', {
      name: 'image',
      resourceType: 'DOCKER',
      target: `${registry.host}/private/app:1`,
      intervalSeconds: 3600,
    });
    const without = await post(`/api/resources/${res.id}/check`, {});
    expect(without).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'DOCKER_ERROR' });
    expect(without.message).toMatch(/^auth: /);
    await post('/admin/api/registry-credentials', { registry: registry.host, ...cred });
    const withCred = await post(`/api/resources/${res.id}/check`, {});
    expect(withCred).toMatchObject({ status: 'AVAILABLE', errorCode: null });
  });

  it('exports per-resource and scheduler metrics that promtool accepts', async () => {
    const text = (await daemon.admin.raw('GET', '/actuator/prometheus')).text;
    expect(text).toMatch(/^monctl_resource_status\{resource_id="1",type="HTTP",location="daemon"\} 1$/m);
    expect(text).toMatch(/^monctl_resource_status\{resource_id="2",type="HTTP",location="daemon"\} 0$/m);
    expect(text).toMatch(/^monctl_check_duration_seconds_bucket\{le="[^"]+",type="HTTP",location="daemon"\} \d+$/m);
    expect(text).toMatch(/^monctl_checks_total\{type="HTTP",location="daemon",status="NOT_AVAILABLE"\} [1-9]/m);
    expect(text).toMatch(/^monctl_check_failures_total\{type="HTTP",location="daemon"\} [1-9]/m);
    expect(text).toMatch(/^monctl_scheduler_lag_seconds_count\{location="daemon"\} [1-9]/m);
    const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(check.stdout + check.stderr).toBe('');
    expect(check.status).toBe(0);
  });

  it('forgets a deleted resource', async () => {
    const r = await post('/api/resources', {
      name: 'short-lived',
      resourceType: 'TCP',
      target: webUrl.replace('http://', ''),
      intervalSeconds: 3600,
    });
    await until(async () => ((await history(r.id)).length ? true : undefined), 'a scheduled check');
    await daemon.admin.raw('DELETE', `/api/resources/${r.id}`);
    const text = (await daemon.admin.raw('GET', '/actuator/prometheus')).text;
    expect(text).not.toContain(`resource_id="${r.id}"`);
  });
});
