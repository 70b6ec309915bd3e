import net from 'node:net';
import type { Logger } from 'pino';
import { parseStreamTarget } from '../../src/tunnel/protocol.ts';
import { type MuxStream, StreamError } from '../../src/tunnel/mux/stream.ts';
import { splice } from '../../src/tunnel/splice.ts';
import { collectBuffersSooner } from '../../src/tunnel/collect-buffers.ts';

export interface ServeOptions {
  skipTls: boolean;
  /** Connect limit towards targets (the daemon applies it to response headers too); beyond it the client gets 504. */
  targetTimeoutMs: number;
  log: Logger;
}

/**
 * Serves the streams the daemon opens on the tunnel. Each is one connection
 * to a target on this side: the agent connects (TCP, or TLS for https
 * targets) and pipes bytes both ways. HTTP, WebSocket and TCP routes all look
 * the same here: the daemon speaks HTTP end to end, the agent parses nothing.
 */
export function createStreamHandler(opts: ServeOptions) {
  return (stream: MuxStream, raw: unknown): void => {
    collectBuffersSooner(1);
    const target = parseStreamTarget(raw);
    if (!target) return void stream.destroy(new StreamError('BAD_TARGET', 'invalid stream target'));
    const { host, port } = target;
    // node:tls is loaded by the first TLS target only: an agent serving plain targets does without it.
    const socket = target.tls
      ? process
          .getBuiltinModule('node:tls')
          .connect({ host, port, rejectUnauthorized: !opts.skipTls, ...(target.servername ? { servername: target.servername } : {}) })
      : net.connect({ host, port, allowHalfOpen: true, noDelay: true });
    socket.setNoDelay(true);
    socket.setTimeout(opts.targetTimeoutMs);
    socket.once(target.tls ? 'secureConnect' : 'connect', () => socket.setTimeout(0));
    socket.once('timeout', () => socket.destroy(new StreamError('ETIMEDOUT', 'target timed out')));
    // Before splice's own handler: the daemon gets the target's reason (code and message) in the reset.
    socket.on('error', (err: NodeJS.ErrnoException) => {
      const reason =
        err instanceof StreamError
          ? err
          : new StreamError(err.code ?? 'ETARGET', `target ${err.code ?? ''} ${err.message}`.replace(/\s+/g, ' ').trim());
      opts.log.warn({ target: `${host}:${port}`, code: reason.code, error: reason.message }, 'target failed');
      stream.destroy(reason);
    });
    splice(stream, socket);
  };
}
