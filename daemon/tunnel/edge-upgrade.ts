import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { statusTitle } from '../../src/errors.ts';
import { endToEndHeaders, H, relay } from '../../src/tunnel/protocol.ts';
import { type EdgeDeps, findRoute } from './edge-http.ts';
import { agentError, cancel, exchangeInfo, openStream, tunnelHeaders } from './forward.ts';
import { problem, rawProblem } from './raw-response.ts';

function headerLines(headers: Record<string, string | string[]>): string {
  let out = '';
  for (const [name, value] of Object.entries(headers)) {
    for (const v of Array.isArray(value) ? value : [value]) out += `${name}: ${String(v).replace(/[\r\n]/g, '')}\r\n`;
  }
  return out;
}

/**
 * An HTTP upgrade (WebSocket) on the edge. The agent performs the upgrade
 * with the target; on its 101 the h2 stream becomes a raw duplex that is piped
 * to the client's socket both ways.
 */
export async function forwardUpgrade(deps: EdgeDeps, req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
  socket.on('error', () => {});
  const route = await findRoute(deps, req);
  const url = req.url ?? '/';
  if (!route) return rawProblem(socket, problem(404, 'no-route', `No route for host ${req.headers.host ?? '(none)'}`), url);
  const exchange = deps.observer.begin(route, exchangeInfo(req));
  const headers = { ...tunnelHeaders(req, route, 'upgrade'), [H.upgrade]: String(req.headers.upgrade ?? '') };
  const { stream, error } = openStream(deps.sessions, route.agentId, headers, false);
  if (!stream) {
    exchange.finish(502, error);
    return rawProblem(socket, problem(502, 'agent-unavailable', error ?? 'agent not connected'), url);
  }
  (socket as Socket).setNoDelay?.(true);
  (socket as Socket).setTimeout?.(0);
  let status: number | null = null;

  stream.on('response', (h) => {
    status = Number(h[H.status] ?? h[':status']);
    const failed = agentError(h);
    if (failed) {
      stream.resume();
      exchange.finish(status, failed);
      return rawProblem(socket, problem(status, status === 504 ? 'target-timeout' : 'target-unavailable', failed), url);
    }
    const lines = headerLines(endToEndHeaders(h));
    if (status === 101) {
      socket.write(`HTTP/1.1 101 Switching Protocols\r\n${lines}Connection: Upgrade\r\nUpgrade: ${String(h[H.upgrade] ?? '')}\r\n\r\n`);
      if (head.length) stream.write(head);
      socket.on('data', (c: Buffer) => { exchange.bytesIn += c.length; });
      socket.pipe(stream);
    } else {
      // The target declined the upgrade: relay its answer, delimited by closing the connection.
      socket.write(`HTTP/1.1 ${status} ${statusTitle(status)}\r\n${lines}Connection: close\r\n\r\n`);
    }
    stream.on('data', (c: Buffer) => { exchange.bytesOut += c.length; });
    relay(stream, socket);
  });
  stream.on('error', () => {});
  stream.on('close', () => {
    if (status === null) {
      exchange.finish(502, 'the agent closed the stream');
      return rawProblem(socket, problem(502, 'agent-unavailable', 'the agent closed the stream'), url);
    }
    const broken = Boolean(stream.rstCode) || !stream.readableEnded;
    exchange.finish(status, broken ? 'tunnel stream broken' : undefined);
    if (broken) socket.destroy();
  });
  socket.on('close', () => {
    exchange.finish(status, status === null ? 'client disconnected' : undefined);
    cancel(stream);
  });
}
