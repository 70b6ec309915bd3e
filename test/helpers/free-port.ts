import { createServer } from 'node:net';

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
