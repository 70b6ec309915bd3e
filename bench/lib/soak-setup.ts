import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { startAgent, type TestAgent, until } from '../../test/tunnel/helpers.ts';
import type { SoakTargets } from './soak-targets.ts';

/** One API call of the setup: anything but a 2xx aborts the run, with the daemon's answer. */
export function caller(url: string, key: string, connections = 50) {
  const dispatcher = new Agent({ connections, headersTimeout: 120_000, bodyTimeout: 120_000, connectTimeout: 60_000 });
  const call = async <T = any>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await request(url + path, {
      method: method as 'GET',
      dispatcher,
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    });
    const text = await res.body.text();
    if (res.statusCode < 200 || res.statusCode > 299) throw new Error(`${method} ${path}: ${res.statusCode} ${text}`);
    return (text ? JSON.parse(text) : undefined) as T;
  };
  return { call, close: () => dispatcher.close() };
}
export type Call = ReturnType<typeof caller>['call'];

/** Runs `work(i)` for i in [0, n) with at most `concurrency` at once. */
export async function inParallel(n: number, concurrency: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < n) await work(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
}

/**
 * Creates `count` resources through the API, `tcpShare` of them TCP, spread
 * over the targets, all with the shortest interval the API accepts; returns their ids.
 */
export async function createResources(
  call: Call,
  targets: SoakTargets,
  count: number,
  tcpShare: number,
  intervalSeconds: number,
): Promise<number[]> {
  const ids: number[] = [];
  const tcpCount = targets.tcp.length ? Math.round(count * tcpShare) : 0;
  await inParallel(count, 50, async (i) => {
    const tcp = i < tcpCount;
    const pool = tcp ? targets.tcp : targets.http;
    const target = pool[i % pool.length];
    const created = await call<{ id: number }>('POST', '/api/resources', {
      name: `soak-${tcp ? 'tcp' : 'http'}-${i}`,
      resourceType: tcp ? 'TCP' : 'HTTP',
      target,
      intervalSeconds,
    });
    ids.push(created.id);
  });
  return ids;
}

export interface SoakTunnel {
  agentId: number;
  agent: TestAgent;
  routeId: number;
  host: string;
  /** A route that carries no traffic: updating it produces a known `ROUTE_UPDATED`. */
  markerRouteId: number;
  dir: string;
}

/** An agent slot with a fresh token, `monctl agent` connected with it, and the soak's routes. */
export async function startSoakTunnel(call: Call, url: string, upstream: string): Promise<SoakTunnel> {
  const { id: agentId } = await call<{ id: number }>('POST', '/admin/api/agents', { name: 'soak-agent' });
  const { token } = await call<{ token: string }>('POST', `/admin/api/agents/${agentId}/token`);
  const dir = mkdtempSync(join(tmpdir(), 'monctl-soak-'));
  const tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
  const agent = startAgent(url, tokenFile);
  await until(async () => {
    if (agent.proc.exitCode !== null || agent.proc.signalCode !== null) throw new Error(`monctl agent exited\n${agent.stderr()}`);
    return (await call<{ status: string }>('GET', `/admin/api/agents/${agentId}`)).status === 'CONNECTED';
  }, 100);
  const host = 'soak.test';
  const route = await call<{ id: number }>('POST', '/admin/api/routes', {
    name: 'soak',
    type: 'HTTP',
    agentId,
    target: upstream,
    hostname: host,
  });
  const marker = await call<{ id: number }>('POST', '/admin/api/routes', {
    name: 'soak-marker',
    type: 'HTTP',
    agentId,
    target: 'http://127.0.0.1:9/marker-0',
    hostname: 'marker.test',
  });
  return { agentId, agent, routeId: route.id, host, markerRouteId: marker.id, dir };
}
