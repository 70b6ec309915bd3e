import { writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { edge, startTarget, startTunnel, subscribe, type Tunnel, until } from './helpers.ts';

/** Agent sessions: events, access log, kill and restart, token rotation, replacement, shutdown. */
describe('tunnel: lifecycle', () => {
  let tunnel: Tunnel;
  let target: Awaited<ReturnType<typeof startTarget>>;
  let routeId: number;
  const held: ServerResponse[] = [];

  beforeAll(async () => {
    target = await startTarget((req, res) => {
      if (req.url === '/hold') return void held.push(res); // never answered: the agent dies first
      if (req.url === '/half') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('partial');
        return void held.push(res);
      }
      res.end(`ok ${req.url}`);
    });
    tunnel = await startTunnel();
    routeId = await tunnel.httpRoute('life', target.url, 'life.test');
  });
  afterAll(async () => {
    await tunnel?.close();
    await target?.close();
  });

  it('reports each request: topology events, a LOG event and an access-log entry without credentials', async () => {
    const topology = await subscribe(tunnel.daemon, '/admin/sse/topology');
    const log = await subscribe(tunnel.daemon, `/admin/sse/routes/${routeId}/log`);
    try {
      const res = await edge(tunnel.daemon.edgeUrl, 'life.test', 'POST', '/report?token=s3cret', 'abc', {
        authorization: 'Bearer very-secret',
        'content-type': 'text/plain',
      });
      expect(res.status).toBe(200);
      const completed = await until(() => topology.events.find((e) => e.event === 'REQUEST_COMPLETED' && e.data.routeId === routeId));
      const inFlight = topology.events.find((e) => e.event === 'REQUEST_IN_FLIGHT' && e.data.requestId === completed.data.requestId);
      expect(inFlight?.data).toMatchObject({ routeId, agentId: tunnel.agentId, method: 'POST', path: '/report', inFlight: 1 });
      expect(completed.data).toMatchObject({ routeId, agentId: tunnel.agentId, status: 200, inFlight: 0 });
      const entry = await until(() => log.events.find((e) => e.event === 'LOG'));
      expect(entry.data).toMatchObject({
        routeId,
        method: 'POST',
        path: '/report',
        status: 200,
        bytesIn: 3,
        bytesOut: res.body.length,
        clientIp: '127.0.0.1',
        agentId: tunnel.agentId,
        error: null,
      });
      const stored = await tunnel.daemon.admin.call(operations.getRouteLog, { params: { id: routeId } });
      expect(stored[0]).toMatchObject({ id: entry.data.id, path: '/report', status: 200 });
      expect(JSON.stringify(stored)).not.toMatch(/secret/);
      const topo = await tunnel.daemon.admin.call(operations.getTopology);
      expect(JSON.stringify(topo)).toContain(`agent:${tunnel.agentId}`);
    } finally {
      topology.close();
      log.close();
    }
  });

  it('exports tunnel metrics', async () => {
    const res = await tunnel.daemon.admin.raw('GET', '/actuator/prometheus');
    expect(res.text).toContain('monctl_tunnel_agents_connected 1');
    expect(res.text).toMatch(new RegExp(`monctl_tunnel_requests_total\\{route="${routeId}",status="200"\\} \\d+`));
    expect(res.text).toContain(`monctl_tunnel_sent_bytes_total{route="${routeId}"}`);
    expect(res.text).toContain(`monctl_tunnel_request_duration_seconds_bucket{le="0.001",route="${routeId}"}`);
    expect(res.text).toContain('monctl_tunnel_requests_in_flight');
  });

  it('answers 502 when the agent is killed mid-request, and serves again once it is back', async () => {
    const topology = await subscribe(tunnel.daemon, '/admin/sse/topology');
    try {
      const pending = edge(tunnel.daemon.edgeUrl, 'life.test', 'GET', '/hold');
      const partial = edge(tunnel.daemon.edgeUrl, 'life.test', 'GET', '/half').then(
        () => 'complete',
        (err) => `aborted: ${err.code ?? err.message}`,
      );
      await until(() => held.length === 2);
      tunnel.agent.proc.kill('SIGKILL');
      const res = await pending;
      expect(res.status).toBe(502);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      // Headers were already out: the client must see a broken response, not a clean end.
      expect(await partial).toMatch(/^aborted/);
      await tunnel.waitStatus('DISCONNECTED');
      const gone = await until(() => topology.events.find((e) => e.event === 'AGENT_DISCONNECTED'));
      expect(gone.data.agent).toMatchObject({ id: tunnel.agentId, status: 'DISCONNECTED' });
      expect((await edge(tunnel.daemon.edgeUrl, 'life.test', 'GET', '/x')).status).toBe(503);

      tunnel.agent = tunnel.startAgent();
      await tunnel.waitStatus('CONNECTED');
      const back = await edge(tunnel.daemon.edgeUrl, 'life.test', 'GET', '/again');
      expect(back.status).toBe(200);
      expect(back.text).toBe('ok /again');
    } finally {
      topology.close();
      held.splice(0).forEach((r) => r.destroy());
    }
  });

  it('a second agent with the same token replaces the first, which exits', async () => {
    const topology = await subscribe(tunnel.daemon, '/admin/sse/topology');
    try {
      const first = tunnel.agent;
      tunnel.agent = tunnel.startAgent();
      const event = await until(() => topology.events.find((e) => e.event === 'AGENT_CONNECTED'));
      expect(event.data).toMatchObject({ replaced: true, agent: { id: tunnel.agentId, status: 'CONNECTED' } });
      expect(await first.exited).toBe(1);
      expect(topology.events.some((e) => e.event === 'AGENT_DISCONNECTED')).toBe(false);
      expect((await edge(tunnel.daemon.edgeUrl, 'life.test', 'GET', '/second')).text).toBe('ok /second');
    } finally {
      topology.close();
    }
  });

  it('a rotated token disconnects the live agent; the new token in its file lets it back in', async () => {
    const { token } = await tunnel.daemon.admin.call(operations.rotateAgentToken, { params: { id: tunnel.agentId } });
    await tunnel.waitStatus('DISCONNECTED');
    expect((await edge(tunnel.daemon.edgeUrl, 'life.test', 'GET', '/x')).status).toBe(503);
    await until(() => tunnel.agent.logs.find((l) => l.msg === 'tunnel: dial failed' && l.status === 401));
    writeFileSync(tunnel.tokenFile, token);
    await tunnel.waitStatus('CONNECTED');
    expect((await edge(tunnel.daemon.edgeUrl, 'life.test', 'GET', '/rotated')).text).toBe('ok /rotated');
  });

  it('detects a frozen agent by its missing pings, and the agent dials back once it runs again', async () => {
    tunnel.agent.proc.kill('SIGSTOP');
    try {
      await tunnel.waitStatus('DISCONNECTED');
      expect((await edge(tunnel.daemon.edgeUrl, 'life.test', 'GET', '/x')).status).toBe(503);
    } finally {
      tunnel.agent.proc.kill('SIGCONT');
    }
    await tunnel.waitStatus('CONNECTED');
    expect((await edge(tunnel.daemon.edgeUrl, 'life.test', 'GET', '/thawed')).text).toBe('ok /thawed');
  });

  it('the agent stops cleanly on SIGTERM', async () => {
    expect(await tunnel.agent.stop('SIGTERM')).toBe(0);
    await tunnel.waitStatus('DISCONNECTED');
    tunnel.agent = tunnel.startAgent();
    await tunnel.waitStatus('CONNECTED');
  });

  it('the daemon drains and exits cleanly with an agent connected', async () => {
    expect(await tunnel.daemon.stop('SIGTERM')).toBe(0);
  });
});
