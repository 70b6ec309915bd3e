import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holdsFor } from '../../daemon/alerts/routing/inhibition.ts';
import { insertResources, openContext, type TestContext } from './helpers/context.ts';

/**
 * Incidents of the protocol check types behind a tunnel route (docs/API.md#check-types): a TLS,
 * GRPC or SSH check of a TCP route's listen port, or a WEBSOCKET check of an HTTP route's host
 * name, depends on the route's agent, so its alerts are held back while that agent is down, as an
 * HTTP or TCP check's are. Read by the alert router's holdsFor over a real SQLite store.
 */
let tc: TestContext;
let routedPort = 0;

beforeAll(async () => {
  tc = await openContext();
  const now = Date.now();
  const agent = await tc.ctx.db
    .insertInto('agents')
    .values({
      name: 'edge',
      token_hash: null,
      token_created_at: null,
      status: 'DISCONNECTED',
      connected_at: null,
      last_seen_at: now,
      pod_id: null,
      remote_address: null,
      version: null,
      created_at: now,
      open_incident_id: null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  routedPort = 47_001;
  const route = {
    agent_id: agent.id,
    path_prefix: null,
    enabled: 1,
    created_at: now,
    updated_at: now,
    basic_users: null,
    ip_allow: null,
    ip_deny: null,
    rate_per_second: null,
    rate_burst: null,
  };
  await tc.ctx.db
    .insertInto('routes')
    .values([
      { ...route, name: 'svc', type: 'TCP', target: '10.0.0.5:22', hostname: null, listen_port: routedPort },
      { ...route, name: 'app', type: 'HTTP', target: 'http://10.0.0.5:8080', hostname: 'app.example.com', listen_port: null },
    ])
    .execute();
});
afterAll(async () => {
  await tc?.close();
});

describe('protocol checks behind a route of a down agent', () => {
  it('TLS, GRPC, SSH on the TCP route and WEBSOCKET on the HTTP route are held; others are not', async () => {
    const held = [
      { type: 'TLS', target: `127.0.0.1:${routedPort}` },
      { type: 'GRPC', target: `[::1]:${routedPort}` },
      { type: 'SSH', target: `localhost:${routedPort}` },
      { type: 'WEBSOCKET', target: 'wss://app.example.com/live' },
      { type: 'TCP', target: `127.0.0.1:${routedPort}` },
    ];
    const free = [
      { type: 'TLS', target: '127.0.0.1:47002' },
      { type: 'SSH', target: 'example.com' }, // port 22, not the route's
      { type: 'WEBSOCKET', target: 'ws://other.example.com/' },
      { type: 'UDP', target: `127.0.0.1:${routedPort}` }, // a TCP route carries no datagrams
    ];
    const ids = await insertResources(tc.ctx, [...held, ...free]);
    const holds = await holdsFor(tc.ctx.db, ids);
    expect(ids.map((id) => holds.get(id))).toEqual([...held.map(() => 'defer'), ...free.map(() => undefined)]);
  });
});
