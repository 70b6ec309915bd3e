import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';

/** How long, and for how many more bytes, a closing connection keeps reading what the client still sends. */
export interface LingerLimits {
  ms: number;
  bytes: number;
}

export const LINGER_LIMITS: LingerLimits = { ms: 2_000, bytes: 1024 * 1024 };

const lingering = new WeakSet<Socket>();
const patched = new WeakSet<Socket>();
const lastRequest = new WeakMap<Socket, IncomingMessage>();

/**
 * The same staged close for a connection that ends while its request body is
 * still arriving: a 401 or 404 answered before the body was read, on a
 * `Connection: close` request. node destroys such a socket as soon as the
 * answer is written (`destroySoon`), with the body's bytes unread. A socket
 * whose request was read whole still closes at once.
 */
export function lingerOnClose(server: Server, limits: LingerLimits = LINGER_LIMITS): void {
  server.on('request', (req: IncomingMessage) => {
    if (req.httpVersionMajor !== 1) return; // HTTP/2 streams close on their own
    const socket = req.socket;
    lastRequest.set(socket, req);
    if (patched.has(socket)) return;
    patched.add(socket);
    const destroySoon = socket.destroySoon.bind(socket);
    socket.destroySoon = () => {
      const pending = lastRequest.get(socket);
      if (!pending || pending.complete || socket.destroyed || !socket.readable || lingering.has(socket)) return destroySoon();
      lingeringEnd(socket, undefined, limits);
    };
  });
}

/**
 * Whether `socket` is closing in stages. node's parser, once it failed, fails
 * again on every further chunk of the request and emits `clientError` each
 * time: those must not destroy the socket (see lingeringEnd).
 */
export function isLingering(socket: object): boolean {
  return lingering.has(socket as Socket);
}

/**
 * A staged close (RFC 9112 section 9.6, nginx's "lingering close") for an
 * answer written straight to the socket, such as a 431 to a request line too
 * long to parse, while the request's body may still be arriving. Destroying
 * the socket with unread bytes makes the kernel send a RST, and the client's
 * stack may then drop the answer unread (the client sees EPIPE, never its
 * 4xx: the hostile OpenAPI test met this in about half its runs). Here the
 * socket sends `last` and its FIN, then reads and drops what still comes
 * until the client closes too, for at most `limits`.
 */
export function lingeringEnd(socket: Socket, last: string | Buffer | undefined, limits: LingerLimits = LINGER_LIMITS): void {
  lingering.add(socket);
  let received = 0;
  const done = () => {
    clearTimeout(timer);
    socket.destroy();
  };
  const timer = setTimeout(done, limits.ms);
  timer.unref();
  socket.on('data', (chunk: Buffer) => {
    received += chunk.length;
    if (received > limits.bytes) done();
  });
  socket.once('end', done);
  socket.resume();
  if (last === undefined) socket.end();
  else socket.end(last);
}
