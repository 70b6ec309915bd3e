import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { bearer, send } from '../helpers/http.ts';

/** `promtool check metrics` on the text; returns its exit code and what it reported. */
function promtool(text: string): { status: number | null; output: string } {
  const run = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  if (run.error) throw run.error;
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('Prometheus metrics', () => {
  let d: TestDaemon;
  let text: string;
  let userId: number;
  beforeAll(async () => {
    d = await startDaemon();
    const user = await d.admin.call(operations.createUser, { body: { username: 'metric', password: 'metric-password', role: 'USER' } });
    userId = user.id;
    await d.admin.call(operations.updateUser, { params: { id: userId }, body: { role: 'USER' } });
    await send(d.url, 'PUT', '/admin/api/users/987654', {
      headers: { ...bearer(d.adminKey), 'content-type': 'application/json' },
      body: '{}',
    });
    await send(d.url, 'DELETE', '/admin/api/users/not-a-number', { headers: bearer(d.adminKey) });
    await send(d.url, 'GET', '/api/me');
    await send(d.url, 'GET', '/no/such/route/123');
    await send(d.url, 'GET', '/login');
    await send(d.url, 'GET', '/actuator/health');
    const res = await send(d.url, 'GET', '/actuator/prometheus');
    expect(res.status).toBe(200);
    expect(String(res.headers['content-type'])).toMatch(/^text\/plain/);
    text = res.text;
  });
  afterAll(async () => {
    await d?.stop();
  });

  it('passes promtool check metrics', () => {
    const { status, output } = promtool(text);
    expect(output).toBe('');
    expect(status).toBe(0);
  });

  it('promtool can fail on this input', () => {
    // A counter without _total and a histogram missing its +Inf bucket.
    const bad = '# HELP requests Requests.\n# TYPE requests counter\nrequests 1\n';
    expect(promtool(bad).status).not.toBe(0);
  });

  it('has default process metrics', () => {
    expect(text).toMatch(/^process_cpu_seconds_total /m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds /m);
  });

  it('times requests by method, route template and status, never a raw id', () => {
    const series = text.split('\n').filter((l) => l.startsWith('monctl_http_request_duration_seconds_count{'));
    const labels = series.map((l) => Object.fromEntries([...l.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]])));
    expect(labels).toContainEqual({ method: 'PUT', route: '/admin/api/users/{id}', status: '200' });
    expect(labels).toContainEqual({ method: 'PUT', route: '/admin/api/users/{id}', status: '404' });
    expect(labels).toContainEqual({ method: 'DELETE', route: '/admin/api/users/{id}', status: '400' });
    expect(labels).toContainEqual({ method: 'POST', route: '/admin/api/users', status: '200' });
    expect(labels).toContainEqual({ method: 'GET', route: '/api/me', status: '401' });
    expect(labels).toContainEqual({ method: 'GET', route: '/login', status: '200' });
    for (const l of labels) {
      expect(Object.keys(l).sort()).toEqual(['method', 'route', 'status']);
      expect(l.route).not.toMatch(/\d{2,}|not-a-number|no\/such/);
      expect(l.status).toMatch(/^\d{3}$/);
    }
    expect(text).toMatch(/^monctl_http_request_duration_seconds_bucket\{.*le="\+Inf".*\} \d+/m);
    expect(text).not.toContain(String(987654));
  });
});
