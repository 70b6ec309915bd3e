import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { PodRelay } from './tunnel-relay.ts';
import type { DaemonContext } from '../context.ts';
import { sendProblem } from '../http/problem.ts';
import { routeRequest, type Routing } from './edge-route.ts';
import { exchangeInfo } from './forward.ts';
import type { EdgeGate } from './access/gate.ts';
import { HttpExchange } from './http-exchange.ts';
import type { ExchangeInfo, Observer } from './observe.ts';
import type { PoolBalancer } from './pool/balancer.ts';
import type { RemoteAgents } from './pool/remote-agents.ts';
import { NO_AGENT, sendNoAgent } from './pool/unavailable.ts';
import type { RouteTable } from './route-table.ts';
import type { AgentSessions } from './sessions.ts';

export interface EdgeDeps {
  ctx: DaemonContext;
  table: RouteTable;
  sessions: AgentSessions;
  observer: Observer;
  gate: EdgeGate;
  /** Chooses the agent of the route's pool for each exchange (pool/balancer.ts). */
  balancer: PoolBalancer;
  /** Pods: reaches agents whose session is on another pod. */
  relay?: PodRelay;
  /** Pods: which agents other pods hold (pool/remote-agents.ts). */
  remote?: RemoteAgents;
}

/** The target timeout of a relayed exchange (the agent's own is known to the pod holding its session). */
export const RELAY_TARGET_TIMEOUT_MS = 30_000;

/** A routed request (not refused). */
export type Routed = Exclude<Routing, { error: unknown }>;

/** Methods node:http's client sent without a body unless one was given (the others get an empty chunked body). */
const BODYLESS = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS', 'TRACE', 'CONNECT']);

/**
 * One edge request through the tunnel: the daemon is the HTTP client of the
 * target, over a pooled keep-alive stream through the agent
 * (target-connection.ts) that the route's pool chose (pool/balancer.ts).
 * Bodies stream both ways with backpressure; nothing is buffered whole.
 */
export function forwardHttp(deps: EdgeDeps, req: IncomingMessage, res: ServerResponse): Promise<void> | undefined {
  const routing = routeRequest(deps.table, req, deps.gate);
  if (routing instanceof Promise) return routing.then((r) => forwardRouted(deps, req, res, r));
  return forwardRouted(deps, req, res, routing) ?? undefined;
}

function forwardRouted(deps: EdgeDeps, req: IncomingMessage, res: ServerResponse, routing: Routing): Promise<void> | void {
  if ('error' in routing) {
    // A refusal on a known route is in its access log, as other answers of the edge are.
    if (routing.route)
      deps.observer.begin(routing.route, exchangeInfo(req, routing.logPath)).finish(routing.error.status, routing.error.message);
    return sendProblem(req, res, routing.error);
  }
  const info = exchangeInfo(req, routing.logPath);
  const member = deps.balancer.pick(routing.route, info.clientIp);
  if (!member) return unpicked(deps, req, res, routing, info);
  new HttpExchange(deps, routing, req, res, deps.observer.begin(routing.route, info, member.agentId), info.clientIp).begin(member);
}

/** No agent in the rotation as far as this pod knows: pods look again (at most every 250 ms), else 503. */
async function unpicked(deps: EdgeDeps, req: IncomingMessage, res: ServerResponse, routing: Routed, info: ExchangeInfo): Promise<void> {
  const member = deps.remote && (await deps.remote.refresh()) ? deps.balancer.pick(routing.route, info.clientIp) : undefined;
  if (member) {
    if (res.destroyed) return;
    return new HttpExchange(deps, routing, req, res, deps.observer.begin(routing.route, info, member.agentId), info.clientIp).begin(member);
  }
  deps.observer.begin(routing.route, info).finish(NO_AGENT.status, NO_AGENT.detail);
  sendNoAgent(req, res);
}

/** How the request body goes to the target: none, as received (Content-Length), or chunked. */
export type Framing = 'none' | 'raw' | 'chunked';

/** The request head the target gets, and how its body follows. */
export function requestHead(req: IncomingMessage, path: string, headers: OutgoingHttpHeaders): [string, Framing] {
  const chunked = req.headers['transfer-encoding'] !== undefined;
  if (chunked) delete headers['content-length'];
  const framing: Framing = chunked
    ? 'chunked'
    : headers['content-length'] !== undefined
      ? 'raw'
      : BODYLESS.has(req.method!)
        ? 'none'
        : 'chunked';
  let head = `${req.method} ${path} HTTP/1.1\r\n`;
  for (const name in headers) {
    const value = headers[name];
    if (Array.isArray(value)) for (const v of value) head += `${name}: ${v}\r\n`;
    else if (value !== undefined) head += `${name}: ${value}\r\n`;
  }
  head += framing === 'chunked' ? 'Connection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n' : 'Connection: keep-alive\r\n\r\n';
  return [head, framing];
}
