import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { checkNow, httpResource, type Target, target, until } from '../alerts/helpers.ts';
import { bearer, login, send } from '../helpers/http.ts';
import { type Pods, startPods } from './pods.ts';
import { stream } from './sse-stream.ts';

/**
 * One system seen from any pod (issue 18): two pods on one PostgreSQL
 * database; what is done through one is seen through the other.
 */
describe('pods are one system', () => {
  let cluster: Pods;
  let t: Target;
  let a: Pods['pods'][number];
  let b: Pods['pods'][number];

  beforeAll(async () => {
    t = await target();
    cluster = await startPods(2, { args: ['--scheduler', 'off'] });
    [a, b] = [cluster.pod('pod-a'), cluster.pod('pod-b')];
  });
  afterAll(async () => {
    await cluster?.stop();
    await t?.close();
  });

  it('an SSE subscriber on pod A sees the events of writes on pod B, and resumes on pod B with Last-Event-ID', async () => {
    const onA = stream(a.url, '/api/events', a.adminKey);
    await until(() => onA.kinds().includes('SNAPSHOT'));
    const id = await httpResource(b, 'seen-everywhere', t.url);
    await checkNow(b, id);
    await until(() => onA.events.some((e) => e.event === 'CHECK_COMPLETED' && e.data.resourceId === id));
    expect(onA.events.find((e) => e.event === 'STATUS_CHANGED')?.data).toMatchObject({ resourceId: id, to: 'available' });
    const last = onA.events.at(-1)!.id;
    await onA.close();

    // Missed while away, written through A; the resume is on B, and replays exactly what was missed.
    t.set(503);
    await checkNow(a, id);
    t.set(200);
    await checkNow(a, id);
    const onB = stream(b.url, '/api/events', b.adminKey, last);
    await until(() => onB.events.filter((e) => e.event === 'CHECK_COMPLETED').length === 2);
    expect(onB.kinds()).not.toContain('SNAPSHOT');
    expect(Number(onB.events[0].id)).toBe(Number(last) + 1);
    expect(onB.events.map((e) => Number(e.id))).toEqual(onB.events.map((_, i) => Number(last) + 1 + i));
    expect(onB.events.filter((e) => e.event === 'STATUS_CHANGED').map((e) => e.data.to)).toEqual(['not_available', 'available']);
    await onB.close();
  });

  it('a key revoked through one pod is refused by every pod on its next request', async () => {
    const key = await a.admin.call(operations.createApiKey, { body: { name: 'short-lived', role: 'USER' } });
    const me = (pod: typeof a) => send(pod.url, 'GET', '/api/me', { headers: bearer(key.token) });
    expect((await me(b)).status).toBe(200);
    await a.admin.call(operations.revokeApiKey, { params: { id: key.id } });
    expect((await me(b)).status).toBe(401);
    expect((await me(a)).status).toBe(401);
  });

  it('CORS origins, visibility and routes changed through one pod apply on the other (told on commit, no restart)', async () => {
    const preflight = () =>
      send(b.url, 'OPTIONS', '/api/resources', {
        headers: { Origin: 'https://board.example.com', 'Access-Control-Request-Method': 'GET' },
      });
    expect((await preflight()).headers['access-control-allow-origin']).toBeUndefined();
    await a.admin.call(operations.addCorsOrigin, { body: { origin: 'https://board.example.com' } });
    await until(async () => (await preflight()).headers['access-control-allow-origin'] === 'https://board.example.com', 50);

    // A resource in a HIDDEN group: anonymous callers of B stop seeing it once A hides the group.
    const group = await a.admin.call(operations.createGroup, { body: { name: 'ops', visibility: 'PUBLIC' } });
    const id = await httpResource(a, 'soon-hidden', t.url, { groupIds: [group.id] });
    const anonymousSees = async () => (await send(b.url, 'GET', '/api/resources')).json().some((r: { id: number }) => r.id === id);
    await until(anonymousSees, 50);
    const events = stream(b.url, '/api/events', b.adminKey);
    await a.admin.call(operations.updateGroup, { params: { id: group.id }, body: { name: 'ops', visibility: 'HIDDEN' } });
    await until(async () => !(await anonymousSees()), 50);
    await events.close();

    // A route created through A is served by B's edge (no agent: 503, not 404 "no route").
    const edge = () => send(b.edgeUrl, 'GET', '/', { headers: { Host: 'app.cluster.test' } });
    expect((await edge()).status).toBe(404);
    const agent = await a.admin.call(operations.createAgent, { body: { name: 'edge-a' } });
    await a.admin.call(operations.createRoute, {
      body: { name: 'app', type: 'HTTP', agentId: agent.id, target: 'http://127.0.0.1:9/', hostname: 'app.cluster.test' },
    });
    await until(async () => (await edge()).status !== 404, 50);
  });

  it('login throttling counts failures on every pod', async () => {
    for (let i = 0; i < 3; i++) expect((await login(a.url, 'throttled', 'wrong-password-1')).res.status).toBe(302);
    for (let i = 0; i < 2; i++) expect((await login(b.url, 'throttled', 'wrong-password-1')).res.status).toBe(302);
    // Five failures in the cluster: both pods refuse the sixth.
    await until(async () => (await login(a.url, 'throttled', 'wrong-password-1')).res.status === 429, 50);
    expect((await login(b.url, 'throttled', 'wrong-password-1')).res.status).toBe(429);
  });

  it('topology events of one pod reach the topology stream of the other', async () => {
    const onB = stream(b.url, '/admin/sse/topology', b.adminKey);
    await until(() => onB.kinds().includes('SNAPSHOT'));
    await a.admin.call(operations.createAgent, { body: { name: 'made-on-a' } });
    await until(() => onB.events.some((e) => e.event === 'AGENT_CREATED' && e.data.agent.name === 'made-on-a'));
    await onB.close();
  });
});
