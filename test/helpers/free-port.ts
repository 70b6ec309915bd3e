import { connect, createServer } from 'node:net';

/**
 * A port the OS just handed out on 127.0.0.1, then released: for servers that
 * cannot bind port 0 and report it (pebble, PostgreSQL, a daemon restarted on
 * the same address).
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once something accepts connections on 127.0.0.1:`port` (polled every 50 ms). */
export async function listeningOn(port: number, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const tryOnce = () =>
    new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.setTimeout(1_000, () => socket.destroy());
      socket.once('connect', () => resolve(true)).once('close', () => resolve(false));
      socket.once('connect', () => socket.destroy()).once('error', () => {});
    });
  while (!(await tryOnce())) {
    if (Date.now() > deadline) throw new Error(`nothing listens on 127.0.0.1:${port} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
