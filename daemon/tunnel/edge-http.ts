import { type ClientRequest, type IncomingMessage, request, type ServerResponse } from 'node:http';
import { HttpError } from '../../src/errors.ts';
import { endToEndHeaders } from '../../src/tunnel/protocol.ts';
import type { DaemonContext } from '../context.ts';
import { sendProblem } from '../http/problem.ts';
import { routeRequest } from './edge-route.ts';
import { exchangeInfo, forwardHeaders, parseHttpTarget, targetFailure } from './forward.ts';
import type { EdgeGate } from './access/gate.ts';
import type { Observer } from './observe.ts';
import type { RouteTable } from './route-table.ts';
import type { AgentSessions } from './sessions.ts';

export interface EdgeDeps {
  ctx: DaemonContext;
  table: RouteTable;
  sessions: AgentSessions;
  observer: Observer;
  gate: EdgeGate;
}

/**
 * One edge request through the tunnel: the daemon is the HTTP client of the
 * target, over a pooled keep-alive stream through the agent. Bodies stream
 * both ways with backpressure; nothing is buffered whole.
 */
export async function forwardHttp(deps: EdgeDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const routing = await routeRequest(deps.table, req, deps.gate);
  if ('error' in routing) {
    // A refusal on a known route is in its access log, as other answers of the edge are.
    if (routing.route) deps.observer.begin(routing.route, exchangeInfo(req, routing.logPath)).finish(routing.error.status, routing.error.message);
    return sendProblem(req, res, routing.error);
  }
  const { route } = routing;
  const exchange = deps.observer.begin(route, exchangeInfo(req, routing.logPath));
  const fail = (status: number, code: string, detail: string) => {
    exchange.finish(res.headersSent ? res.statusCode : status, detail);
    if (res.destroyed || res.writableEnded) return;
    if (res.headersSent) return void res.destroy(); // mid-response: the client must see a truncated response
    sendProblem(req, res, new HttpError(status, code, detail));
  };
  const link = deps.sessions.get(route.agentId);
  const target = parseHttpTarget(route.target);
  if (!link || !target) {
    req.resume();
    return link ? fail(502, 'target-unavailable', 'invalid target URL') : fail(502, 'agent-unavailable', 'agent not connected');
  }

  let out: ClientRequest;
  try {
    out = request({
      agent: deps.sessions.pool(link, target.stream), method: req.method, path: target.base + routing.forward,
      headers: forwardHeaders(req, route, target, routing.host), setHost: false,
    });
  } catch (err) {
    req.resume();
    return fail(502, 'agent-unavailable', `tunnel: ${(err as Error).message}`);
  }
  // The agent's --target-timeout: how long the target may stay silent before its response headers
  // (re-armed while the client uploads, as a socket idle timeout would be); the body may take longer.
  let answered = false;
  const timer = setTimeout(() => out.destroy(Object.assign(new Error('target timed out'), { code: 'ETIMEDOUT' })), link.targetTimeoutMs);
  out.on('error', (err: NodeJS.ErrnoException) => {
    clearTimeout(timer);
    const failure = targetFailure(err);
    fail(failure.status, failure.code, failure.detail);
  });
  out.on('response', (answer) => {
    answered = true;
    clearTimeout(timer);
    try {
      res.writeHead(answer.statusCode ?? 502, endToEndHeaders(answer.headers));
    } catch (err) {
      answer.destroy();
      return fail(502, 'bad-target-response', `invalid response from target: ${(err as Error).message}`);
    }
    answer.on('error', () => {}); // reported by 'close' below
    answer.on('close', () => { if (!answer.complete) fail(502, 'agent-unavailable', 'the tunnel stream broke mid-response'); });
    answer.on('data', (chunk: Buffer) => { exchange.bytesOut += chunk.length; });
    answer.pipe(res);
  });

  req.on('data', (chunk: Buffer) => {
    exchange.bytesIn += chunk.length;
    if (!answered) timer.refresh();
  });
  req.pipe(out);
  res.on('finish', () => exchange.finish(res.statusCode));
  res.on('close', () => {
    if (res.writableFinished) return;
    clearTimeout(timer);
    exchange.finish(res.headersSent ? res.statusCode : null, 'client disconnected');
    out.destroy();
  });
}
