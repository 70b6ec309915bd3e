import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type Caller, ok } from '../monitoring/helpers.ts';
import { startTunnel, type Tunnel } from '../tunnel/helpers.ts';

// The check without saving at an agent gives the daemon's verdict, report and timing; a resource
// checked at the daemon and an agent keeps each location's phases (docs/API.md#check-timing).
let tunnel: Tunnel;
let admin: Caller;
let web: Server;
let base: string;

beforeAll(async () => {
  web = createServer((req, res) => {
    const status = req.url === '/down' ? 'DOWN' : 'UP';
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status }));
  });
  await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
  tunnel = await startTunnel();
  admin = { kind: 'key', token: tunnel.daemon.adminKey };
}, 60_000);

afterAll(async () => {
  await tunnel?.close();
  web?.closeAllConnections();
  await new Promise((r) => web?.close(r));
});

const test = (body: Record<string, unknown>) => call(tunnel.daemon, admin, 'POST', '/admin/api/resources/test', body);

describe('at an agent', () => {
  it('a test with conditions gives the same verdict, report and phases as at the daemon', async () => {
    const body = { resourceType: 'HTTP', target: `${base}/down`, conditions: ['[STATUS] == 200', '[BODY].status == UP'] };
    const here = await ok(test(body));
    const there = await ok(test({ ...body, location: 'edge-agent' }));
    expect(there.location).toBe('edge-agent');
    for (const key of ['status', 'errorCode', 'message'] as const) expect(there[key]).toBe(here[key]);
    expect(there.message).toBe('[BODY].status (DOWN) == UP');
    expect(there.report.conditions).toEqual(here.report.conditions);
    expect(there.report.response.status).toBe(200);
    expect(there.timing.totalMs).toBeGreaterThanOrEqual(0);
    const byId = await ok(test({ ...body, target: `${base}/up`, location: tunnel.agentId }));
    expect(byId).toMatchObject({ location: 'edge-agent', status: 'AVAILABLE' });
  });

  it('a resource at the daemon and the agent: each location result has its timing, latestTiming is null', async () => {
    const { id } = await ok(
      call(tunnel.daemon, admin, 'POST', '/api/resources', {
        name: 'both',
        resourceType: 'HTTP',
        target: `${base}/up`,
        intervalSeconds: 3600,
        active: false,
        locations: ['daemon', 'edge-agent'],
      }),
    );
    await ok(call(tunnel.daemon, admin, 'POST', `/api/resources/${id}/check`));
    const detail = await ok(call(tunnel.daemon, admin, 'GET', `/admin/api/resources/${id}`));
    expect(detail.latestTiming).toBeNull();
    expect(detail.locationResults.map((l: any) => l.location)).toEqual(['daemon', 'edge-agent']);
    for (const l of detail.locationResults) expect(l.timing.totalMs).toBeGreaterThanOrEqual(0);
  });
});
