import type { MuxSession } from './session.ts';

export interface KeepaliveOptions {
  intervalMs: number;
  timeoutMs: number;
  /** Each PONG, with its round trip. */
  onAnswer?(ms: number): void;
  /** A PING left (the edge's balancer treats an agent whose PING stays unanswered for a while as suspect). */
  onPing?(): void;
  /** The peer is dead: neither its PONG nor any other byte came within timeoutMs of a PING. */
  onDead(): void;
}

/**
 * Keepalive of a tunnel session, on both ends: a PING every intervalMs; the peer is dead when
 * timeoutMs pass, while we read, with neither its PONG nor any other byte from it (HTTP/2 clients' read-idle
 * health checks judge the same way). A peer relaying megabytes queues its PONG behind them, and a
 * starved host runs timers late: counting only the PONG dropped live agents mid-transfer under
 * load (docs/DECISIONS.md#tunnel-keepalive). Returns the stop function; the session's close stops it too.
 */
export function keepalive(session: MuxSession, opts: KeepaliveOptions): () => void {
  const timer = setInterval(() => {
    if (session.destroyed) return;
    let answered = false;
    let read = session.bytesRead;
    let deadline: NodeJS.Timeout;
    const expire = () =>
      // Timers run before the poll phase reads the socket: after a stall, read what arrived first.
      setImmediate(() => {
        if (answered || session.destroyed) return;
        // While we do not read (our writes to the peer are backlogged), its PONG waits unread: the
        // writer's own bound (ERR_TUNNEL_OVERLOAD) judges a peer that does not read.
        if (session.bytesRead !== read || session.readPaused) {
          read = session.bytesRead;
          deadline = setTimeout(expire, opts.timeoutMs);
          return;
        }
        opts.onDead();
      });
    deadline = setTimeout(expire, opts.timeoutMs);
    opts.onPing?.();
    session.ping((err, ms) => {
      answered = true;
      clearTimeout(deadline);
      if (!err) opts.onAnswer?.(ms ?? 0);
    });
  }, opts.intervalMs);
  timer.unref();
  const stop = () => clearInterval(timer);
  session.once('close', stop);
  return stop;
}
