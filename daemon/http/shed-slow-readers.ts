import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { Server as TlsServer } from 'node:tls';

export interface SlowReaderLimits {
  /** Bytes per second a client must take while a response waits on it. */
  floorBytesPerSec: number;
  /** Over how long the rate is measured (and so the least time a slow client is kept). */
  windowMs: number;
}

/** What is tracked of a socket with unsent response bytes: since when, and how much it had taken then. */
interface Watch { since: number; taken: number }

/**
 * Sheds clients that read their responses slower than a floor (issue 14: a
 * client taking 64 B every 2 s stayed connected for 120 s; 1,000 of them held
 * 350 MB). Once a second, each connection with response bytes waiting in its
 * socket is checked: over each window it must have taken `floor × window`
 * bytes, or it is destroyed (a proxied response's tunnel stream is reset in
 * turn). A connection whose buffer empties starts again from zero. Upgraded
 * connections (the agent tunnel, WebSockets) are left alone: the tunnel has
 * its own limits, a WebSocket may be idle for long.
 */
export function shedSlowReaders(server: Server, limits: SlowReaderLimits, onShed: () => void = () => {}): () => void {
  const sockets = new Map<Socket, Watch | undefined>();
  server.on(server instanceof TlsServer ? 'secureConnection' : 'connection', (socket: Socket) => {
    sockets.set(socket, undefined);
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('upgrade', (req) => sockets.delete(req.socket as Socket));
  const timer = setInterval(() => {
    const now = Date.now();
    for (const [socket, watch] of sockets) {
      if (socket.destroyed) { sockets.delete(socket); continue; }
      // Taken by the client's kernel: everything handed to the socket minus what still waits in it.
      const taken = socket.bytesWritten - socket.writableLength;
      if (socket.writableLength === 0) { if (watch) sockets.set(socket, undefined); continue; }
      if (!watch) { sockets.set(socket, { since: now, taken }); continue; }
      const elapsed = now - watch.since;
      if (elapsed < limits.windowMs) continue;
      if ((taken - watch.taken) * 1000 < limits.floorBytesPerSec * elapsed) {
        sockets.delete(socket);
        onShed();
        socket.destroy();
      } else sockets.set(socket, { since: now, taken });
    }
  }, Math.min(1_000, limits.windowMs / 4));
  timer.unref();
  return () => clearInterval(timer);
}
