import type { Agent, ProbeLoad, Route, Topology } from '../../src/api/schemas/tunnel.ts';
import { connectMember, countOnMember, healthOfMember, poolAfterUpdate, poolAgents, poolLines, servesEdges } from './topology-pools.ts';

/**
 * The topology as the live view keeps it: the SNAPSHOT, then each event of
 * `/admin/sse/topology` applied in order. Pure, so it is tested without a
 * terminal.
 */
type TopoRoute = Topology['routes'][number];

function upsertBy(list: ProbeLoad[], item: ProbeLoad): ProbeLoad[] {
  const i = list.findIndex((x) => x.agentId === item.agentId);
  return i < 0 ? [...list, item] : list.map((x, j) => (j === i ? item : x));
}

function upsert<T extends { id: number }>(list: T[], item: T): T[] {
  const i = list.findIndex((x) => x.id === item.id);
  return i < 0 ? [...list, item] : list.map((x, j) => (j === i ? item : x));
}

export function applyTopologyEvent(topo: Topology | null, kind: string, data: any): Topology | null {
  if (kind === 'SNAPSHOT') return data as Topology;
  if (!topo) return topo;
  const t: Topology = { ...topo };
  switch (kind) {
    case 'AGENT_CREATED':
      t.agents = upsert(t.agents, data.agent as Agent);
      break;
    case 'AGENT_DELETED':
      // The daemon has sent ROUTE_UPDATED for the pools it left and ROUTE_DELETED for the routes it served alone.
      t.agents = t.agents.filter((a) => a.id !== data.id);
      t.routes = t.routes
        .filter((r) => poolAgents(r).some((id) => id !== data.id))
        .map((r) => (r.pool ? { ...r, pool: r.pool.filter((m) => m.agentId !== data.id) } : r));
      t.edges = t.edges.filter((e) => e.from !== `agent:${data.id}` && e.to !== `agent:${data.id}`);
      break;
    case 'TOKEN_ROTATED':
      t.agents = t.agents.map((a) => (a.id === data.agentId ? { ...a, hasToken: true } : a));
      break;
    case 'AGENT_CONNECTED':
    case 'AGENT_DISCONNECTED': {
      const agent = data.agent as Agent;
      t.agents = upsert(t.agents, agent);
      t.edges = t.edges.filter((e) => !(e.kind === 'CONNECTION' && e.to === `agent:${agent.id}`));
      if (kind === 'AGENT_CONNECTED') t.edges = [...t.edges, { from: `pod:${data.podId}`, to: `agent:${agent.id}`, kind: 'CONNECTION' }];
      t.routes = connectMember(t, agent.id, kind === 'AGENT_CONNECTED');
      break;
    }
    case 'ROUTE_CREATED':
    case 'ROUTE_UPDATED': {
      const route = data.route as Route;
      const inFlight = t.routes.find((r) => r.id === route.id)?.inFlight ?? 0;
      const pool = poolAfterUpdate(t, route);
      t.routes = upsert(t.routes, { ...route, pool, inFlight } as TopoRoute);
      t.edges = servesEdges(t.edges, route.id, pool);
      break;
    }
    case 'ROUTE_DELETED':
      t.routes = t.routes.filter((r) => r.id !== data.id);
      t.edges = servesEdges(t.edges, data.id, []);
      break;
    case 'ROUTE_HEALTH':
      t.routes = healthOfMember(t, data);
      break;
    case 'REQUEST_IN_FLIGHT':
    case 'REQUEST_COMPLETED':
      // `startedOn` (added by the live view): the agent a retried request started on, whose count it leaves.
      t.routes = countOnMember(t, data.routeId, data.agentId, kind === 'REQUEST_IN_FLIGHT' ? 1 : -1, data.startedOn);
      t.routes = t.routes.map((r) => (r.id === data.routeId ? { ...r, inFlight: data.inFlight } : r));
      break;
    case 'POD_UP':
      t.pods = upsert(t.pods, data.pod);
      break;
    case 'POD_DOWN':
      t.pods = t.pods.filter((p) => p.id !== data.pod.id);
      break;
    case 'PROBE_LOAD':
      t.probes = upsertBy(t.probes ?? [], data as ProbeLoad);
      break;
    default:
      return topo;
  }
  return t;
}

/** The name of the pod, agent or route with this id in the topology; the id when it is not there. */
function nameIn(list: Array<{ id: number; name: string }> | undefined, id: unknown): string {
  return list?.find((x) => x.id === id)?.name ?? String(id);
}

/**
 * One line of the event pane. Events that carry only ids (TOKEN_ROTATED,
 * REQUEST_*, the pod of AGENT_CONNECTED) are named from `topo`, the topology
 * as it was before the event.
 */
export function describeEvent(kind: string, data: any, topo: Topology | null = null, at = new Date()): string {
  const time = at.toTimeString().slice(0, 8);
  const agent = (id: unknown) => nameIn(topo?.agents, id);
  const route = (id: unknown) => nameIn(topo?.routes, id);
  const pod = (id: unknown) => nameIn(topo?.pods, id);
  const what = ((): string => {
    switch (kind) {
      case 'SNAPSHOT':
        return `${data.pods?.length ?? 0} pods, ${data.agents?.length ?? 0} agents, ${data.routes?.length ?? 0} routes`;
      case 'AGENT_CREATED':
        return `agent ${data.agent.name} created`;
      case 'AGENT_DELETED':
        return `agent ${data.name} deleted`;
      case 'TOKEN_ROTATED':
        return `agent ${agent(data.agentId)} got a new token`;
      case 'AGENT_CONNECTED':
        return `agent ${data.agent.name} connected to pod ${pod(data.podId)}${data.replaced ? ' (replaced a session)' : ''}`;
      case 'AGENT_DISCONNECTED':
        return `agent ${data.agent.name} disconnected: ${data.reason}`;
      case 'ROUTE_CREATED':
        return `route ${data.route.name} created`;
      case 'ROUTE_UPDATED':
        return `route ${data.route.name} updated`;
      case 'ROUTE_DELETED':
        return `route ${data.name} deleted`;
      case 'ROUTE_HEALTH':
        return `route ${route(data.routeId)} agent ${agent(data.agentId)} ${data.health}, ${data.inRotation ? 'in' : 'out of'} rotation${data.error ? `: ${data.error}` : ''}`;
      case 'REQUEST_IN_FLIGHT':
        return `route ${route(data.routeId)} via ${agent(data.agentId)} ${data.method} ${data.path} (${data.inFlight} in flight)`;
      case 'REQUEST_COMPLETED':
        return `route ${route(data.routeId)} via ${agent(data.agentId)} ${data.status ?? 'ERR'} in ${data.durationMs} ms (${data.inFlight} in flight)`;
      case 'POD_UP':
        return `pod ${data.pod.name} up`;
      case 'POD_DOWN':
        return `pod ${data.pod.name} down`;
      case 'PROBE_LOAD':
        return `agent ${agent(data.agentId)} checks ${data.checksPerMinute}/min, ${data.inFlight} in flight${data.skipped ? `, ${data.skipped} skipped` : ''}`;
      default:
        return JSON.stringify(data);
    }
  })();
  return `${time} ${kind} ${what}`;
}

/** A pod's load on its line: what it checks and how many agent sessions it holds. */
function podLoad(load: NonNullable<Topology['pods'][number]['load']>): string {
  const n = (x: number) => x.toLocaleString('en-US');
  const shards = load.shards === null ? '' : `${load.shards} shards, `;
  return `load: ${shards}${n(load.resources)} resources, ${n(load.checksTotal)} checks, ${load.agents} agent${load.agents === 1 ? '' : 's'}`;
}

export interface TreeLine {
  depth: number;
  text: string;
  status?: string;
}

/**
 * Pods, the agents connected to each with the routes they serve (every route whose pool they are in);
 * then agents not connected; then each route with its pool: health, rotation and traffic share per
 * agent. `recent(routeId)`: requests per agent of the last minute, as the live view counted them.
 */
export function topologyTree(t: Topology, recent?: (routeId: number) => Map<number, number>): TreeLine[] {
  const lines: TreeLine[] = [];
  const routesOf = (agentId: number) => t.routes.filter((r) => poolAgents(r).includes(agentId));
  const addAgent = (a: Agent, depth: number) => {
    const load = t.probes?.find((p) => p.agentId === a.id);
    // The probe load of agents that run checks for resources located there.
    const probes =
      load && (load.checksPerMinute || load.inFlight || load.skipped)
        ? `  checks: ${load.checksPerMinute}/min, ${load.inFlight} in flight${load.skipped ? `, ${load.skipped} skipped` : ''}`
        : '';
    const serves = routesOf(a.id).map((r) => r.name);
    lines.push({
      depth,
      text: `agent ${a.name} [${a.status}]${a.remoteAddress ? ` from ${a.remoteAddress}` : ''}${probes}${serves.length ? `  serves: ${serves.join(', ')}` : ''}`,
      status: a.status,
    });
  };
  const connected = new Map<number, number>();
  for (const e of t.edges) {
    if (e.kind === 'CONNECTION') connected.set(Number(e.to.split(':')[1]), Number(e.from.split(':')[1]));
  }
  for (const p of t.pods) {
    lines.push({
      depth: 0,
      text: `pod ${p.name} (v${p.version}, since ${p.startedAt})${p.load ? `  ${podLoad(p.load)}` : ''}`,
      status: 'up',
    });
    for (const a of t.agents) if (connected.get(a.id) === p.id) addAgent(a, 1);
  }
  const rest = t.agents.filter((a) => !connected.has(a.id) || !t.pods.some((p) => p.id === connected.get(a.id)));
  if (rest.length) {
    lines.push({ depth: 0, text: 'not connected' });
    for (const a of rest) addAgent(a, 1);
  }
  // Each route once, its pool under it: an agent in several pools shows in each.
  if (t.routes.length) lines.push({ depth: 0, text: 'routes' });
  for (const r of t.routes) {
    const match = r.type === 'TCP' ? `:${r.listenPort}` : `${r.hostname}${r.pathPrefix ?? '/'}`;
    lines.push({
      depth: 1,
      text: `route ${r.name} ${r.type} ${match} -> ${r.target}${r.enabled ? '' : ' (disabled)'}  in flight: ${r.inFlight}`,
    });
    lines.push(...poolLines(r, recent?.(r.id)));
  }
  return lines;
}
