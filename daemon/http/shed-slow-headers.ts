import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { Server as TlsServer, type TLSSocket } from 'node:tls';
import { rawProblemResponse } from './problem.ts';

/**
 * Node enforces `headersTimeout` only from a periodic sweep that misses
 * connections whose request line trickles in a byte at a time (slow-loris):
 * they stayed open for minutes. So each connection also gets its own deadline
 * for complete request headers, armed at connect and again after each
 * response, cleared when a request (or upgrade) arrives.
 */
const headerDeadline = new WeakMap<Socket, NodeJS.Timeout>();
const inFlight = new WeakMap<Socket, number>();
export function shedSlowHeaders(server: Server, ms: number): void {
  const arm = (socket: Socket) => {
    clearTimeout(headerDeadline.get(socket));
    const timer = setTimeout(() => {
      if (socket.destroyed) return;
      if (socket.writable) socket.end(rawProblemResponse(Object.assign(new Error('header timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' })));
      setTimeout(() => socket.destroy(), 1_000).unref();
    }, ms);
    timer.unref();
    headerDeadline.set(socket, timer);
  };
  const disarm = (socket: Socket) => clearTimeout(headerDeadline.get(socket));
  // Over TLS the request's socket is the TLSSocket, not the TCP one of 'connection'
  // (the handshake has its own deadline, handshakeTimeout in daemon/http/tls.ts).
  server.on(server instanceof TlsServer ? 'secureConnection' : 'connection', (socket: Socket) => {
    // HTTP/2 (the TLS edge) has no request line to wait for: its sessions have their own idle timeout.
    const alpn = (socket as TLSSocket).alpnProtocol;
    if (alpn && alpn !== 'http/1.1') return;
    arm(socket);
    socket.once('close', () => disarm(socket));
  });
  server.on('request', (req, res) => {
    if (req.httpVersionMajor === 2) return; // a stream of an HTTP/2 session, whose socket is not the request's own
    const socket = req.socket as Socket;
    disarm(socket);
    inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1);
    res.once('close', () => {
      const left = (inFlight.get(socket) ?? 1) - 1;
      inFlight.set(socket, left);
      // A pipelined request may already be in the handler: only an idle socket waits for headers.
      if (left === 0 && !socket.destroyed) arm(socket);
    });
  });
  server.on('upgrade', (req) => disarm(req.socket as Socket));
}
