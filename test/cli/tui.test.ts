import { render } from 'ink-testing-library';
import React from 'react';
import { describe, expect, it } from 'vitest';
import type { Topology } from '../../src/api/schemas/tunnel.ts';
import { routeLogColumns, routeTitle } from '../../cli/tui/route-log.tsx';
import { applyStatusEvent, age, sparkline } from '../../cli/tui/status-model.ts';
import { StatusApp, StatusView, statusColumns } from '../../cli/tui/status-view.tsx';
import { fitColumns, GAP } from '../../cli/tui/table.tsx';
import type { StreamEvent, StreamState } from '../../cli/tui/stream.ts';
import { applyTopologyEvent, topologyTree } from '../../cli/tui/topology-model.ts';
import { TopologyApp, TopologyView } from '../../cli/tui/topology-view.tsx';
import { SHARE_WINDOW_MS, TrafficShare } from '../../cli/tui/traffic-share.ts';
import type { PoolMember } from '../../src/api/schemas/route-pools.ts';

const h = React.createElement;
const at = '2026-11-21T10:00:00';
const agent = (id: number, name: string, status: 'PENDING' | 'CONNECTED' | 'DISCONNECTED', podId: number | null = null) => ({
  id,
  name,
  status,
  hasToken: true,
  tokenCreatedAt: at,
  connectedAt: null,
  lastSeenAt: null,
  podId,
  remoteAddress: null,
  version: null,
  createdAt: at,
});
const route = {
  id: 7,
  name: 'site',
  type: 'HTTP' as const,
  agentId: 3,
  agents: [{ agentId: 3, target: null }],
  policy: 'round-robin' as const,
  affinity: 'none' as const,
  healthCheck: null,
  requestHeaders: {},
  responseHeaders: {},
  hostHeader: null,
  preserveHost: false,
  stripPrefix: false,
  target: 'http://127.0.0.1:3000',
  hostname: 'site.test',
  pathPrefix: '/',
  listenPort: null,
  allowEncodedSlashes: false,
  enabled: true,
  auth: 'none' as const,
  basicUsers: [],
  ipAllow: [],
  ipDeny: [],
  rateLimit: null,
  httpsRedirect: false,
  sso: null,
  createdAt: at,
  updatedAt: at,
};
const snapshot: Topology = {
  pods: [{ id: 1, name: 'pod-a', startedAt: at, version: '0.1.0' }],
  agents: [agent(3, 'edge', 'CONNECTED', 1), agent(4, 'spare', 'PENDING')],
  routes: [{ ...route, inFlight: 0 }],
  edges: [
    { from: 'pod:1', to: 'agent:3', kind: 'CONNECTION' },
    { from: 'agent:3', to: 'route:7', kind: 'SERVES' },
  ],
  probes: [
    { agentId: 3, checksPerMinute: 0, inFlight: 0, skipped: 0 },
    { agentId: 4, checksPerMinute: 0, inFlight: 0, skipped: 0 },
  ],
};

/** A stream fed by the test: the app subscribes, the test pushes events. */
function feed() {
  let handlers: { onEvent: (e: StreamEvent) => void; onState: (s: StreamState) => void } | undefined;
  let closed = false;
  return {
    subscribe: (hs: typeof handlers & object) => {
      handlers = hs;
      return () => (closed = true);
    },
    push: (event: string, data: unknown) => handlers!.onEvent({ event, id: null, data }),
    state: (s: StreamState) => handlers!.onState(s),
    get closed() {
      return closed;
    },
  };
}

const tick = () => new Promise((r) => setTimeout(r, 50));
async function until(probe: () => boolean) {
  while (!probe()) await tick();
}

describe('topology model', () => {
  it('builds pods > agents, lists agents not connected, then routes', () => {
    const lines = topologyTree(snapshot).map((l) => `${l.depth}:${l.text}`);
    expect(lines[0]).toMatch(/^0:pod pod-a/);
    expect(lines[1]).toBe('1:agent edge [CONNECTED]  serves: site');
    expect(lines[2]).toBe('0:not connected');
    expect(lines[3]).toBe('1:agent spare [PENDING]');
    expect(lines[4]).toBe('0:routes');
    expect(lines[5]).toBe('1:route site HTTP site.test/ -> http://127.0.0.1:3000  in flight: 0');
  });

  it('applies connect, disconnect, in-flight and delete events', () => {
    let t = applyTopologyEvent(snapshot, 'AGENT_CONNECTED', { agent: agent(4, 'spare', 'CONNECTED', 1), podId: 1, replaced: false })!;
    expect(topologyTree(t).filter((l) => l.depth === 1 && l.text.includes('[CONNECTED]')).length).toBe(2);
    t = applyTopologyEvent(t, 'REQUEST_IN_FLIGHT', { routeId: 7, agentId: 3, requestId: 'r', method: 'GET', path: '/', inFlight: 2 })!;
    expect(t.routes[0].inFlight).toBe(2);
    t = applyTopologyEvent(t, 'AGENT_DISCONNECTED', { agent: agent(3, 'edge', 'DISCONNECTED'), reason: 'closed' })!;
    expect(t.edges.some((e) => e.to === 'agent:3' && e.kind === 'CONNECTION')).toBe(false);
    t = applyTopologyEvent(t, 'AGENT_DELETED', { id: 3, name: 'edge' })!;
    expect(t.agents.map((a) => a.name)).toEqual(['spare']);
    expect(t.routes).toEqual([]);
  });

  it('shows the probe load of agents that run checks (issue 19)', () => {
    expect(topologyTree(snapshot)[1].text).not.toMatch(/checks:/);
    const t = applyTopologyEvent(snapshot, 'PROBE_LOAD', { agentId: 3, checksPerMinute: 120, inFlight: 4, skipped: 2 })!;
    expect(topologyTree(t)[1].text).toMatch(/^agent edge \[CONNECTED\] {2}checks: 120\/min, 4 in flight, 2 skipped {2}serves: site$/);
    expect(t.probes.find((p) => p.agentId === 4)).toEqual({ agentId: 4, checksPerMinute: 0, inFlight: 0, skipped: 0 });
  });
});

describe('TopologyView and TopologyApp', () => {
  it('renders the tree, the stream state and the events', () => {
    const { lastFrame, unmount } = render(
      h(TopologyView, { topology: snapshot, events: ['10:00:00 AGENT_CREATED agent edge created'], state: 'reconnecting' }),
    );
    const frame = lastFrame()!;
    expect(frame).toMatch(/reconnecting/);
    expect(frame).toMatch(/pod pod-a/);
    expect(frame).toMatch(/└ agent edge \[CONNECTED\]/);
    expect(frame).toMatch(/in flight: 0/);
    expect(frame).toMatch(/AGENT_CREATED agent edge created/);
    unmount();
  });

  it('follows the stream: snapshot, an agent appears and disappears; q quits', async () => {
    const f = feed();
    const app = render(h(TopologyApp, { subscribe: f.subscribe, onFatal: () => undefined }));
    await until(() => /waiting for the snapshot/.test(app.lastFrame()!));
    f.state('live');
    f.push('SNAPSHOT', snapshot);
    await until(() => /pod pod-a/.test(app.lastFrame()!) && /live/.test(app.lastFrame()!));
    f.push('AGENT_CREATED', { agent: agent(9, 'newbie', 'PENDING') });
    await until(() => /agent newbie \[PENDING\]/.test(app.lastFrame()!));
    f.push('AGENT_DELETED', { id: 9, name: 'newbie' });
    await until(() => /AGENT_DELETED agent newbie deleted/.test(app.lastFrame()!) && !/agent newbie \[/.test(app.lastFrame()!));
    f.state('reconnecting');
    await until(() => /reconnecting/.test(app.lastFrame()!));
    app.stdin.write('q');
    await until(() => f.closed);
    app.unmount();
  });
});

describe('topology events name what they are about', () => {
  it('TOKEN_ROTATED, REQUEST_* and AGENT_CONNECTED show agent, route and pod names, not ids', async () => {
    const f = feed();
    const app = render(h(TopologyApp, { subscribe: f.subscribe, onFatal: () => undefined }));
    f.push('SNAPSHOT', snapshot);
    await until(() => /pod pod-a/.test(app.lastFrame()!));
    f.push('TOKEN_ROTATED', { agentId: 4 });
    f.push('AGENT_CONNECTED', { agent: agent(4, 'spare', 'CONNECTED', 1), podId: 1, replaced: false });
    f.push('REQUEST_IN_FLIGHT', { routeId: 7, agentId: 3, requestId: 'r', method: 'GET', path: '/x', inFlight: 1 });
    f.push('REQUEST_COMPLETED', { routeId: 7, agentId: 3, requestId: 'r', status: 200, durationMs: 5, inFlight: 0 });
    // Ids the topology does not know fall back to the id.
    f.push('TOKEN_ROTATED', { agentId: 99 });
    await until(() => /TOKEN_ROTATED agent 99 got a new token/.test(app.lastFrame()!));
    const frame = app.lastFrame()!;
    expect(frame).toMatch(/TOKEN_ROTATED agent spare got a new token/);
    expect(frame).toMatch(/AGENT_CONNECTED agent spare connected to pod pod-a/);
    expect(frame).toMatch(/REQUEST_IN_FLIGHT route site via edge GET \/x/);
    expect(frame).toMatch(/REQUEST_COMPLETED route site via edge 200 in 5 ms/);
    app.unmount();
  });
});

describe('route pools in the topology', () => {
  const member = (agentId: number, name: string, extra: Partial<PoolMember> = {}): PoolMember => ({
    agentId,
    name,
    connected: true,
    health: 'HEALTHY',
    healthCheckedAt: at,
    healthError: null,
    inRotation: true,
    inFlight: 0,
    requests: 0,
    ...extra,
  });
  const pooled: Topology = {
    ...snapshot,
    agents: [agent(3, 'edge', 'CONNECTED', 1), agent(4, 'spare', 'CONNECTED', 1), agent(5, 'backup', 'DISCONNECTED')],
    routes: [
      {
        ...route,
        agents: [
          { agentId: 3, target: null },
          { agentId: 4, target: 'http://127.0.0.1:3001' },
          { agentId: 5, target: null },
        ],
        healthCheck: { path: '/health' },
        inFlight: 0,
        pool: [
          member(3, 'edge', { requests: 30 }),
          member(4, 'spare', { requests: 10 }),
          member(5, 'backup', { connected: false, inRotation: false, health: 'UNHEALTHY', healthError: 'HTTP 503' }),
        ],
      },
    ],
    edges: [
      { from: 'pod:1', to: 'agent:3', kind: 'CONNECTION' },
      { from: 'pod:1', to: 'agent:4', kind: 'CONNECTION' },
      ...[3, 4, 5].map((id) => ({ from: `agent:${id}`, to: 'route:7', kind: 'SERVES' as const })),
    ],
  };
  /** The pool's lines: under the route's, to the end. */
  const poolText = (t: Topology, recent?: (id: number) => Map<number, number>) => {
    const lines = topologyTree(t, recent).map((l) => `${l.depth}:${l.text}`);
    return lines.slice(lines.findIndex((l) => l.startsWith('1:route site')) + 1);
  };

  it('lists each pool agent with health, rotation and its share of the requests since the daemon started', () => {
    const tree = topologyTree(pooled).map((l) => `${l.depth}:${l.text}`);
    // Every pool agent serves the route.
    expect(tree.filter((l) => l.endsWith('serves: site')).length).toBe(3);
    expect(poolText(pooled)).toEqual([
      '2:pool: round-robin, 2/3 in rotation, share since start',
      '2:edge    HEALTHY      in rotation   share  75%  in flight 0',
      '2:spare   HEALTHY      in rotation   share  25%  in flight 0',
      '2:backup  UNHEALTHY    out, offline  share   0%  in flight 0  HTTP 503',
    ]);
  });

  it('moves members on ROUTE_HEALTH, connections, requests and route updates', () => {
    let t = applyTopologyEvent(pooled, 'ROUTE_HEALTH', {
      routeId: 7,
      agentId: 3,
      health: 'UNHEALTHY',
      inRotation: false,
      error: 'timeout',
    })!;
    t = applyTopologyEvent(t, 'AGENT_CONNECTED', { agent: agent(5, 'backup', 'CONNECTED', 1), podId: 1, replaced: false })!;
    t = applyTopologyEvent(t, 'ROUTE_HEALTH', { routeId: 7, agentId: 5, health: 'HEALTHY', inRotation: true, error: null })!;
    t = applyTopologyEvent(t, 'AGENT_DISCONNECTED', { agent: agent(4, 'spare', 'DISCONNECTED'), reason: 'closed' })!;
    t = applyTopologyEvent(t, 'REQUEST_IN_FLIGHT', { routeId: 7, agentId: 5, requestId: 'a', method: 'GET', path: '/', inFlight: 1 })!;
    expect(poolText(t)).toEqual([
      '2:pool: round-robin, 1/3 in rotation, share since start',
      '2:edge    UNHEALTHY    out           share  75%  in flight 0  timeout',
      '2:spare   HEALTHY      out, offline  share  25%  in flight 0',
      '2:backup  HEALTHY      in rotation   share   0%  in flight 1',
    ]);
    t = applyTopologyEvent(t, 'REQUEST_COMPLETED', { routeId: 7, agentId: 5, requestId: 'a', status: 200, durationMs: 1, inFlight: 0 })!;
    expect(t.routes[0].pool!.find((m) => m.agentId === 5)).toMatchObject({ inFlight: 0, requests: 1 });
    // Route events carry no pool: members that stay keep their state, a new one starts from its agent.
    const { pool: _, inFlight: __, ...plain } = t.routes[0];
    t = applyTopologyEvent(t, 'AGENT_CREATED', { agent: agent(6, 'fresh', 'CONNECTED', 1) })!;
    t = applyTopologyEvent(t, 'ROUTE_UPDATED', {
      route: {
        ...plain,
        agents: [
          { agentId: 5, target: null },
          { agentId: 6, target: null },
        ],
        policy: 'failover',
      },
    })!;
    expect(t.routes[0].pool!.map((m) => [m.name, m.health, m.inRotation, m.requests])).toEqual([
      ['backup', 'HEALTHY', true, 1],
      ['fresh', 'UNKNOWN', true, 0],
    ]);
    expect(t.edges.filter((e) => e.kind === 'SERVES').map((e) => e.from)).toEqual(['agent:5', 'agent:6']);
    expect(poolText(t)[0]).toBe('2:pool: failover, 2/2 in rotation, share since start');
    // Deleting one agent of a pool keeps the route (the daemon sent ROUTE_UPDATED before); its last agent takes it.
    t = applyTopologyEvent(t, 'AGENT_DELETED', { id: 5, name: 'backup' })!;
    expect(t.routes[0].pool!.map((m) => m.name)).toEqual(['fresh']);
    t = applyTopologyEvent(t, 'AGENT_DELETED', { id: 6, name: 'fresh' })!;
    expect(t.routes).toEqual([]);
  });

  it('counts the shares over the last minute, in bounded buckets', () => {
    const traffic = new TrafficShare();
    const t0 = 1_000_000;
    for (let i = 0; i < 1000; i++) traffic.record(7, 3 + (i % 3 === 0 ? 1 : 0), t0 + i * 10);
    expect(Object.fromEntries(traffic.recent(7, t0 + 10_000))).toEqual({ 3: 666, 4: 334 });
    expect(poolText(pooled, (id) => traffic.recent(id, t0 + 10_000)).slice(0, 3)).toEqual([
      '2:pool: round-robin, 2/3 in rotation, share of the last 60 s',
      '2:edge    HEALTHY      in rotation   share  67%  in flight 0',
      '2:spare   HEALTHY      in rotation   share  33%  in flight 0',
    ]);
    // A minute later the window is empty: back to the daemon's counters.
    expect(traffic.recent(7, t0 + 10_000 + SHARE_WINDOW_MS).size).toBe(0);
    expect(poolText(pooled, (id) => traffic.recent(id, t0 + 10_000 + SHARE_WINDOW_MS))[0]).toMatch(/share since start$/);
  });

  it('the live view shows ROUTE_HEALTH and the shares of REQUEST_COMPLETED events, within 80 columns', async () => {
    const f = feed();
    const app = render(h(TopologyApp, { subscribe: f.subscribe, onFatal: () => undefined }));
    f.push('SNAPSHOT', pooled);
    await until(() => /pool: round-robin/.test(app.lastFrame()!));
    for (let i = 0; i < 4; i++)
      f.push('REQUEST_COMPLETED', { routeId: 7, agentId: i ? 5 : 4, requestId: `r${i}`, status: 200, durationMs: 1, inFlight: 0 });
    // A request started on spare and retried on backup leaves spare's count.
    f.push('REQUEST_IN_FLIGHT', { routeId: 7, agentId: 4, requestId: 'retried', method: 'GET', path: '/', inFlight: 1 });
    f.push('REQUEST_COMPLETED', { routeId: 7, agentId: 5, requestId: 'retried', status: 200, durationMs: 1, inFlight: 0 });
    f.push('ROUTE_HEALTH', { routeId: 7, agentId: 3, health: 'UNHEALTHY', inRotation: false, error: 'HTTP 500' });
    await until(() => /ROUTE_HEALTH route site agent edge UNHEALTHY, out of rotation: HTTP 500/.test(app.lastFrame()!));
    const frame = app.lastFrame()!;
    expect(frame).toMatch(/pool: round-robin, 1\/3 in rotation, share of the last 60 s/);
    expect(frame).toMatch(/└ edge {4}UNHEALTHY {4}out {11}share {3}0% {2}in flight 0 {2}HTTP 500/);
    expect(frame).toMatch(/└ spare {3}HEALTHY {6}in rotation {3}share {2}20% {2}in flight 0/);
    expect(frame).toMatch(/└ backup {2}UNHEALTHY {4}out, offline {2}share {2}80% {2}in flight 0/);
    // Inside the box (4 columns of border and padding), the pool's lines fit 80 columns whole.
    for (const line of frame.split('\n').filter((l) => /share|in rotation/.test(l)))
      expect(line.replace(/^│ /, '').replace(/ *│$/, '').length, line).toBeLessThanOrEqual(76);
    app.unmount();
  });
});

describe('status model and view', () => {
  const snap = {
    resources: [
      {
        resourceId: 1,
        name: 'api',
        resourceType: 'HTTP',
        currentStatus: 'available',
        latestCheckStatus: 'AVAILABLE',
        latestCheckedAt: null,
        latestMessage: '200 OK',
        latestErrorCode: null,
      },
      {
        resourceId: 2,
        name: 'db',
        resourceType: 'TCP',
        currentStatus: 'unknown',
        latestCheckStatus: null,
        latestCheckedAt: null,
        latestMessage: null,
        latestErrorCode: null,
      },
    ],
  };

  it('keeps the last checks for the sparkline and ages', () => {
    let rows = applyStatusEvent(new Map(), 'SNAPSHOT', snap);
    for (const ms of [10, 20, 40])
      rows = applyStatusEvent(
        rows,
        'CHECK_COMPLETED',
        { resourceId: 1, historyId: ms, status: 'AVAILABLE', message: 'ok', errorCode: null, durationMs: ms, checkedAt: at },
        1000,
      );
    rows = applyStatusEvent(
      rows,
      'CHECK_COMPLETED',
      {
        resourceId: 1,
        historyId: 99,
        status: 'NOT_AVAILABLE',
        message: 'refused',
        errorCode: 'CONNECTION_ERROR',
        durationMs: 5,
        checkedAt: at,
      },
      1000,
    );
    rows = applyStatusEvent(rows, 'STATUS_CHANGED', { resourceId: 1, name: 'api', from: 'available', to: 'not_available', at });
    const api = rows.get(1)!;
    expect(api.status).toBe('not_available');
    expect(api.durationMs).toBe(5);
    expect(
      sparkline(api.recent)
        .map((s) => s.char)
        .join(''),
    ).toBe('▂▄█▁');
    expect(sparkline(api.recent).at(-1)!.ok).toBe(false);
    expect(age(1000, 66_000)).toBe('1m05s');
  });

  it('filters with / and quits with q', async () => {
    const f = feed();
    const app = render(h(StatusApp, { subscribe: f.subscribe, onFatal: () => undefined }));
    f.push('SNAPSHOT', snap);
    await until(() => /api/.test(app.lastFrame()!) && /db/.test(app.lastFrame()!));
    app.stdin.write('/');
    await until(() => /\/█/.test(app.lastFrame()!));
    app.stdin.write('db');
    await until(() => !/\bapi\b/.test(app.lastFrame()!) && /\bdb\b/.test(app.lastFrame()!));
    app.stdin.write('\r');
    await until(() => /filter: db/.test(app.lastFrame()!));
    app.stdin.write('q');
    await until(() => f.closed);
    app.unmount();
  });

  it('StatusView shows an empty state', () => {
    const { lastFrame, unmount } = render(h(StatusView, { rows: new Map(), state: 'connecting', filter: '', editing: false, now: 0 }));
    expect(lastFrame()).toMatch(/no resources yet/);
    unmount();
  });
});

describe('table layout (cli/tui/table.tsx)', () => {
  const now = Date.now();
  const sum = (placed: Array<{ width: number }>) => placed.reduce((n, p) => n + p.width, 0) + GAP * (placed.length - 1);

  it('never needs more than the width, drops by priority and keeps NAME and STATUS down to 30 columns', () => {
    for (let columns = 30; columns <= 200; columns++) {
      const placed = fitColumns(statusColumns(now), columns);
      expect(sum(placed), `at ${columns}`).toBeLessThanOrEqual(columns);
      expect(placed.map((p) => p.column.header)).toEqual(expect.arrayContaining(['NAME', 'STATUS']));
      for (const p of placed) expect(p.width).toBeGreaterThanOrEqual(p.column.min);
      // A column is shown only if every column of a higher priority is.
      const shown = new Set(placed.map((p) => p.column.header));
      for (const p of placed)
        for (const c of statusColumns(now))
          if (c.priority < p.column.priority) expect(shown.has(c.header), `${c.header} at ${columns}`).toBe(true);
    }
    expect(fitColumns(statusColumns(now), 60).map((p) => p.column.header)).toEqual(['NAME', 'TYPE', 'STATUS', 'ALERT', 'AGE']);
    expect(fitColumns(statusColumns(now), 80).map((p) => p.column.header)).toEqual([
      'NAME',
      'TYPE',
      'STATUS',
      'ALERT',
      'AGE',
      'MS',
      'RECENT',
    ]);
    // The spare room goes to NAME once every column has its preferred width.
    const wide = fitColumns(statusColumns(now), 160);
    expect(sum(wide)).toBe(160);
    expect(wide.filter((p) => p.column.header !== 'NAME').every((p) => p.width === p.column.width)).toBe(true);
  });

  it('routes log keeps the order of the table without --follow, and shows the time of day when narrow', () => {
    expect(fitColumns(routeLogColumns, 120).map((p) => p.column.header)).toEqual([
      'AT',
      'METHOD',
      'PATH',
      'STATUS',
      'MS',
      'CLIENT',
      'ERROR',
    ]);
    expect(fitColumns(routeLogColumns, 60).map((p) => p.column.header)).toEqual(['AT', 'METHOD', 'PATH', 'STATUS', 'MS', 'ERROR']);
    const entry = {
      id: 1,
      routeId: 7,
      at: '2026-11-27T17:01:02',
      method: 'GET',
      path: '/',
      status: 200,
      durationMs: 3,
      bytesIn: 0,
      bytesOut: 5,
      clientIp: '127.0.0.1',
      agentId: 3,
      podId: 1,
      error: null,
    };
    expect(routeLogColumns[0].cell(entry, 8)).toBe('17:01:02');
    expect(routeLogColumns[0].cell(entry, 19)).toBe('2026-11-27T17:01:02');
    expect(routeTitle({ ...route, listenPort: null })).toBe('monctl routes log site (site.test/)');
  });

  it('cuts a long value with … inside its column', () => {
    const rows = applyStatusEvent(new Map(), 'SNAPSHOT', {
      resources: [
        {
          resourceId: 1,
          name: 'a-resource-name-far-longer-than-its-column',
          resourceType: 'DOCKER',
          currentStatus: 'not_available',
          latestCheckedAt: null,
          latestMessage: null,
        },
      ],
    });
    const { lastFrame, unmount } = render(h(StatusView, { rows, state: 'live', filter: '', editing: false, now, width: 60 }));
    const lines = lastFrame()!.split('\n');
    expect(lines[2]).toMatch(/^a-resource-name-… DOCKER not_available /);
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(60);
    unmount();
  });
});

describe('status --watch completes rows that only events named', () => {
  it('a CHECK_COMPLETED for a resource the snapshot did not have: looked up once, TYPE and name filled in', async () => {
    const f = feed();
    const asked: number[] = [];
    const lookup = async (id: number) => {
      asked.push(id);
      return { name: 'late-comer', resourceType: 'TCP', currentStatus: 'available' };
    };
    const app = render(h(StatusApp, { subscribe: f.subscribe, onFatal: () => undefined, lookup }));
    f.push('SNAPSHOT', { resources: [] });
    f.push('CHECK_COMPLETED', {
      resourceId: 9,
      historyId: 1,
      status: 'AVAILABLE',
      message: 'ok',
      errorCode: null,
      durationMs: 4,
      checkedAt: at,
      location: 'daemon',
    });
    await until(() => /late-comer +TCP +available/.test(app.lastFrame()!));
    f.push('STATUS_CHANGED', { resourceId: 9, name: 'late-comer', from: 'unknown', to: 'available', at });
    f.push('CHECK_COMPLETED', {
      resourceId: 9,
      historyId: 2,
      status: 'AVAILABLE',
      message: 'ok',
      errorCode: null,
      durationMs: 5,
      checkedAt: at,
      location: 'daemon',
    });
    await until(() => /late-comer +TCP +available/.test(app.lastFrame()!));
    expect(asked).toEqual([9]);
    app.unmount();
  });
});
