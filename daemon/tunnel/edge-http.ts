import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendProblem } from '../http/problem.ts';
import { SsoAnswer, sendSsoAnswer } from './access/sso-answer.ts';
import { routeRequest, type Routing } from './edge-route.ts';
import { exchangeInfo } from './forward.ts';
import type { EdgeDeps, Routed } from './edge-deps.ts';
import { HttpExchange } from './http-exchange.ts';
import type { ExchangeInfo } from './observe.ts';
import { NO_AGENT, sendNoAgent } from './pool/unavailable.ts';

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
    if (routing.error instanceof SsoAnswer) return sendSsoAnswer(req, res, routing.error);
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
