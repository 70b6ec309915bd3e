import { type ClientRequest, type IncomingMessage, request } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { statusTitle } from '../../src/errors.ts';
import { endToEndHeaders } from '../../src/tunnel/protocol.ts';
import { splice } from '../../src/tunnel/splice.ts';
import { type EdgeDeps, RELAY_TARGET_TIMEOUT_MS } from './edge-http.ts';
import { routeRequest } from './edge-route.ts';
import { exchangeInfo, forwardHeaders, parseHttpTarget, targetFailure } from './forward.ts';
import { problem, rawProblem } from './raw-response.ts';
import { NO_AGENT, rawNoAgent } from './pool/unavailable.ts';
import { forwardPath } from './rules.ts';

function headerLines(headers: Record<string, string | string[]>): string {
  let out = '';
  for (const [name, value] of Object.entries(headers)) {
    for (const v of Array.isArray(value) ? value : [value]) out += `${name}: ${String(v).replace(/[\r\n]/g, '')}\r\n`;
  }
  return out;
}

/**
 * An HTTP upgrade (WebSocket) on the edge. The daemon sends the upgrade to the
 * target over a fresh tunnel stream (never a pooled one: after a 101 the stream
 * carries the new protocol); on the 101 that stream is spliced to the client's
 * socket both ways.
 */
export async function forwardUpgrade(deps: EdgeDeps, req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
  socket.on('error', () => {});
  const url = req.url ?? '/';
  const routing = await routeRequest(deps.table, req, deps.gate);
  if ('error' in routing) {
    if (routing.route)
      deps.observer.begin(routing.route, exchangeInfo(req, routing.logPath)).finish(routing.error.status, routing.error.message);
    return rawProblem(socket, routing.error, url);
  }
  const { route } = routing;
  const info = exchangeInfo(req, routing.logPath);
  // One agent of the pool per upgrade (pool/balancer.ts); pods look again before a 503.
  let member = deps.balancer.pick(route, info.clientIp);
  if (!member && deps.remote && (await deps.remote.refresh())) member = deps.balancer.pick(route, info.clientIp);
  if (!member) {
    deps.observer.begin(route, info).finish(NO_AGENT.status, NO_AGENT.detail);
    return rawNoAgent(socket, url);
  }
  const exchange = deps.observer.begin(route, info, member.agentId);
  let status: number | null = null;
  const fail = (failed: number, code: string, detail: string) => {
    status = failed;
    exchange.finish(failed, detail);
    rawProblem(socket, problem(failed, code, detail), url);
  };
  const agentId = member.agentId;
  const link = deps.sessions.get(agentId);
  const target = parseHttpTarget(member.target);
  if (!target) return fail(502, 'target-unavailable', 'invalid target URL');
  // Pods: an agent connected to another pod is reached through it (tunnel/tunnel-relay.ts).
  const holder = link ? undefined : deps.remote?.url(agentId);
  if (!link && (!holder || !deps.relay)) return fail(502, 'agent-unavailable', 'agent not connected');
  const headers = {
    ...forwardHeaders(req, route, target, routing.host),
    connection: 'Upgrade',
    upgrade: String(req.headers.upgrade ?? ''),
  };
  let out: ClientRequest;
  try {
    out = request({
      createConnection: link
        ? () => link.mux.open(target.stream, { allowHalfOpen: true })
        : (_options, created) =>
            void deps.relay!.dial(holder!, agentId, target.stream).then(
              (s) => created(null, s),
              (err: Error) => created(err, undefined as never),
            ),
      method: req.method,
      path: target.base + forwardPath(route, routing.forward),
      headers,
      setHost: false,
    });
  } catch (err) {
    return fail(502, 'agent-unavailable', `tunnel: ${(err as Error).message}`);
  }
  (socket as Socket).setNoDelay?.(true);
  (socket as Socket).setTimeout?.(0);
  const timer = setTimeout(
    () => out.destroy(Object.assign(new Error('target timed out'), { code: 'ETIMEDOUT' })),
    link?.targetTimeoutMs ?? RELAY_TARGET_TIMEOUT_MS,
  );

  out.on('error', (err: NodeJS.ErrnoException) => {
    clearTimeout(timer);
    if (status !== null) return;
    const failure = targetFailure(err);
    fail(failure.status, failure.code, failure.detail);
  });
  out.on('upgrade', (answer: IncomingMessage, stream: Duplex, upgradeHead: Buffer) => {
    clearTimeout(timer);
    status = 101;
    const lines = headerLines(endToEndHeaders(answer.headers));
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\n${lines}Connection: Upgrade\r\nUpgrade: ${String(answer.headers.upgrade ?? '')}\r\n\r\n`,
    );
    if (upgradeHead.length) {
      exchange.bytesOut += upgradeHead.length;
      socket.write(upgradeHead);
    }
    if (head.length) {
      exchange.bytesIn += head.length;
      stream.write(head);
    }
    socket.on('data', (c: Buffer) => {
      exchange.bytesIn += c.length;
    });
    stream.on('data', (c: Buffer) => {
      exchange.bytesOut += c.length;
    });
    splice(socket, stream, (err) => exchange.finish(101, err ? 'tunnel stream broken' : undefined));
  });
  out.on('response', (answer) => {
    clearTimeout(timer);
    const answered = answer.statusCode ?? 502;
    status = answered;
    // The target declined the upgrade: relay its answer, delimited by closing the connection.
    const lines = headerLines(endToEndHeaders(answer.headers));
    socket.write(`HTTP/1.1 ${answered} ${statusTitle(answered)}\r\n${lines}Connection: close\r\n\r\n`);
    answer.on('data', (c: Buffer) => {
      exchange.bytesOut += c.length;
    });
    answer.on('error', () => {});
    answer.on('close', () => {
      exchange.finish(answered, answer.complete ? undefined : 'tunnel stream broken');
      if (!answer.complete) socket.destroy();
    });
    answer.pipe(socket);
  });
  socket.on('close', () => {
    if (status !== null) return;
    clearTimeout(timer);
    exchange.finish(null, 'client disconnected');
    out.destroy();
  });
  out.end();
}
