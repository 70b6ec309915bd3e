import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Value } from '@sinclair/typebox/value';
import { TopologyEvents } from '../../src/api/schemas/tunnel.ts';
import { ADMIN_PASSWORD, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { expectProblem, login, send, until } from '../helpers/http.ts';
import { agent, api } from './helpers.ts';
import { type Received, watch } from './sse-client.ts';

const CONTROL = new Set(['AGENT_CREATED', 'AGENT_DELETED', 'TOKEN_ROTATED', 'ROUTE_CREATED', 'ROUTE_UPDATED', 'ROUTE_DELETED']);
const control = (events: Received[]) => events.filter((e) => CONTROL.has(e.kind));

let d: TestDaemon;
beforeAll(async () => {
  // A small per-subscriber queue, so that a stalled reader is cut off after a few hundred events.
  // Pings every 300 ms so that the heartbeat can be seen without waiting 15 s.
  d = await startDaemon({ env: { MONCTL_SSE_MAX_QUEUED_BYTES: String(64 * 1024), MONCTL_SSE_HEARTBEAT_MS: '300' } });
});
afterAll(async () => {
  await d?.stop();
});

/** Every payload matches its schema in src/api/schemas/tunnel.ts. */
function expectSchemas(events: Received[]) {
  for (const e of events) {
    const schema = TopologyEvents[e.kind as keyof typeof TopologyEvents];
    expect(schema, e.kind).toBeDefined();
    expect(Value.Check(schema, e.data), `${e.kind} ${JSON.stringify(e.data)}`).toBe(true);
  }
}

describe('topology stream', () => {
  it('starts with SNAPSHOT, then carries each control-plane change once, in order', async () => {
    const w = watch(`${d.url}/admin/sse/topology`, d.adminKey);
    try {
      await w.until((ev) => ev.length >= 1);
      expect(w.events[0].kind).toBe('SNAPSHOT');
      expect(w.events[0].data.pods).toHaveLength(1);
      const id = await agent(d, 'sse-agent');
      await api(d, 'POST', `/admin/api/agents/${id}/token`);
      const route = (
        await api(d, 'POST', '/admin/api/routes', { name: 'sse-r', type: 'HTTP', agentId: id, hostname: 'sse.test', target: 'http://x/' })
      ).json();
      await api(d, 'PUT', `/admin/api/routes/${route.id}`, { enabled: false });
      await api(d, 'DELETE', `/admin/api/routes/${route.id}`);
      await api(d, 'DELETE', `/admin/api/agents/${id}`);
      await w.until((ev) => ev.some((e) => e.kind === 'AGENT_DELETED'));
      const seen = control(w.events);
      expect(seen.map((e) => e.kind)).toEqual([
        'AGENT_CREATED',
        'TOKEN_ROTATED',
        'ROUTE_CREATED',
        'ROUTE_UPDATED',
        'ROUTE_DELETED',
        'AGENT_DELETED',
      ]);
      expect(seen[0].data.agent).toMatchObject({ id, name: 'sse-agent', status: 'PENDING' });
      expect(seen[1].data).toEqual({ agentId: id });
      expect(seen[3].data.route).toMatchObject({ id: route.id, enabled: false });
      expect(seen[4].data).toEqual({ id: route.id, name: 'sse-r' });
      expect(seen[5].data).toEqual({ id, name: 'sse-agent' });
      const ids = w.events.map((e) => Number(e.id));
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      expect(new Set(ids).size).toBe(ids.length);
      expectSchemas(w.events);
    } finally {
      w.close();
    }
  });

  it('resumes after Last-Event-ID without losing anything; an unknown id gets a fresh SNAPSHOT', async () => {
    const first = watch(`${d.url}/admin/sse/topology`, d.adminKey);
    await first.until((ev) => ev.length >= 1);
    await agent(d, 'resume-1');
    await first.until((ev) => ev.some((e) => e.kind === 'AGENT_CREATED' && e.data.agent.name === 'resume-1'));
    const last = first.events.at(-1)!.id;
    first.close();
    // Changes while disconnected.
    const a2 = await agent(d, 'resume-2');
    await api(d, 'POST', `/admin/api/agents/${a2}/token`);
    await api(d, 'DELETE', `/admin/api/agents/${a2}`);
    const second = watch(`${d.url}/admin/sse/topology`, d.adminKey, { lastEventId: last });
    try {
      await agent(d, 'resume-3');
      await second.until((ev) => ev.some((e) => e.kind === 'AGENT_CREATED' && e.data.agent.name === 'resume-3'));
      expect(second.events.map((e) => e.kind)).toEqual(['AGENT_CREATED', 'TOKEN_ROTATED', 'AGENT_DELETED', 'AGENT_CREATED']);
      expect(Number(second.events[0].id)).toBe(Number(last) + 1);
    } finally {
      second.close();
    }
    const stale = watch(`${d.url}/admin/sse/topology`, d.adminKey, { lastEventId: '1' });
    try {
      await stale.until((ev) => ev.length >= 1);
      expect(stale.events[0].kind).toBe('SNAPSHOT');
      expect(stale.events[0].data.agents.map((a: { name: string }) => a.name)).toContain('resume-3');
    } finally {
      stale.close();
    }
  });

  it('cuts off a subscriber that stops reading while another keeps receiving everything', async () => {
    const metric = async () => {
      const text = (await send(d.url, 'GET', '/actuator/prometheus')).text;
      return Number(/^monctl_sse_subscribers_cut_off_total (\d+)/m.exec(text)?.[1] ?? 0);
    };
    const before = await metric();
    const url = new URL(d.url);
    const stalled = connect(Number(url.port), url.hostname);
    stalled.pause(); // never reads: the daemon's queue for it grows until the limit
    let stalledClosed = false;
    stalled.on('close', () => (stalledClosed = true));
    stalled.write(`GET /admin/sse/topology HTTP/1.1\r\nHost: ${url.host}\r\nX-API-KEY: ${d.adminKey}\r\n\r\n`);
    const good = watch(`${d.url}/admin/sse/topology`, d.adminKey);
    try {
      await good.until((ev) => ev.length >= 1);
      const id = await agent(d, 'flood-agent');
      const route = (
        await api(d, 'POST', '/admin/api/routes', { name: 'flood', type: 'HTTP', agentId: id, hostname: 'flood.test', target: 'http://x/' })
      ).json();
      const long = 'p'.repeat(1900);
      let sent = 0;
      while ((await metric()) === before) {
        for (let i = 0; i < 50; i++) {
          const res = await api(d, 'PUT', `/admin/api/routes/${route.id}`, { target: `http://x/${long}/${sent++}` });
          expect(res.status).toBe(200);
        }
        expect(sent).toBeLessThan(20_000);
      }
      await good.until((ev) => control(ev).filter((e) => e.kind === 'ROUTE_UPDATED').length === sent);
      const targets = control(good.events)
        .filter((e) => e.kind === 'ROUTE_UPDATED')
        .map((e) => e.data.route.target.split('/').at(-1));
      expect(targets).toEqual(Array.from({ length: sent }, (_, i) => String(i)));
      // The stalled socket, once read, ends: the daemon hung up on it.
      stalled.resume();
      await until(() => stalledClosed);
    } finally {
      good.close();
      stalled.destroy();
    }
  }, 90_000); // the flood outgrows the kernel's socket buffers first: longer on PostgreSQL, whose round trips make each update slower

  it('counts open subscribers in monctl_sse_subscribers', async () => {
    const gauge = async () => {
      const text = (await send(d.url, 'GET', '/actuator/prometheus')).text;
      return Number(/^monctl_sse_subscribers\{channel="topology"\} (\d+)/m.exec(text)?.[1] ?? NaN);
    };
    await until(async () => (await gauge()) === 0);
    const watchers = [watch(`${d.url}/admin/sse/topology`, d.adminKey), watch(`${d.url}/admin/sse/topology`, d.adminKey)];
    try {
      await until(async () => (await gauge()) === 2);
    } finally {
      for (const w of watchers) w.close();
    }
    await until(async () => (await gauge()) === 0);
  });

  it('serves a browser session (cookie) too, as text/event-stream with : ping heartbeats', async () => {
    const { jar } = await login(d.url, 'admin', ADMIN_PASSWORD);
    const url = new URL(d.url);
    const socket = connect(Number(url.port), url.hostname);
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    try {
      socket.write(`GET /admin/sse/topology HTTP/1.1\r\nHost: ${url.host}\r\nCookie: ${jar.header().cookie}\r\n\r\n`);
      await until(() => /\n: ping\n\n/.test(text), 50);
      const [head, body] = text.split('\r\n\r\n');
      expect(head).toMatch(/^HTTP\/1\.1 200/);
      expect(head).toMatch(/\r\ncontent-type: text\/event-stream/i);
      expect(body).toMatch(/^id: \d+\nevent: SNAPSHOT\ndata: \{"pods":/);
    } finally {
      socket.destroy();
    }
  });

  it('refuses streams without a valid credential (401)', async () => {
    for (const path of ['/admin/sse/topology', '/admin/sse/routes/1/log']) {
      const res = await send(d.url, 'GET', path, { headers: { accept: 'text/event-stream' } });
      expectProblem(res, 401);
      expect(res.headers['www-authenticate']).toBe('Bearer');
    }
    const w = watch(`${d.url}/admin/sse/topology`, 'invalid-key');
    try {
      await until(() => w.failure !== undefined);
      expect((w.failure as { code?: number }).code).toBe(401);
      expect(w.events).toEqual([]);
    } finally {
      w.close();
    }
  });
});
