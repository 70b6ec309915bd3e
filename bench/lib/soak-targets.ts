import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';

/**
 * Local servers the soak run's resources point at, plus the tunnel route's
 * upstream. They stay healthy the whole run, so any failed check is a finding.
 */
export interface SoakTargets {
  /** `http://127.0.0.1:PORT/` of each HTTP target. */
  http: string[];
  /** `127.0.0.1:PORT` of each TCP target. */
  tcp: string[];
  /** Upstream of the tunnel route: answers `tunnel <path>`. */
  tunnel: string;
  /** Requests served, per kind. */
  served: { http: number; tcp: number; tunnel: number };
  close(): Promise<void>;
}

/** The body the tunnel upstream sends for a path, so the driver can check what came back. */
export const tunnelBody = (path: string) => `tunnel ${path}`;

async function listen(server: HttpServer | TcpServer): Promise<number> {
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1', backlog: 1024 }, resolve));
  return (server.address() as AddressInfo).port;
}

export async function startTargets(httpCount: number, tcpCount: number): Promise<SoakTargets> {
  const served = { http: 0, tcp: 0, tunnel: 0 };
  const https: HttpServer[] = [];
  const tcps: TcpServer[] = [];
  const sockets = new Set<Socket>();
  const httpServer = (handler: (path: string) => string) => {
    const server = createHttpServer((req, res) => {
      const body = handler(req.url ?? '/');
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) }).end(body);
    });
    // Longer than the probes' keep-alive (30 s): the server closing an idle connection just as the
    // client reuses it would fail a check with ECONNRESET, a race of the test setup, not of the daemon.
    server.keepAliveTimeout = 65_000;
    https.push(server);
    return server;
  };
  const http: string[] = [];
  for (let i = 0; i < httpCount; i++) {
    http.push(`http://127.0.0.1:${await listen(httpServer(() => (served.http++, 'ok')))}/`);
  }
  const tcp: string[] = [];
  for (let i = 0; i < tcpCount; i++) {
    const server = createTcpServer((socket) => {
      served.tcp++;
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => sockets.delete(socket));
      socket.end();
    });
    tcps.push(server);
    tcp.push(`127.0.0.1:${await listen(server)}`);
  }
  const tunnel = `http://127.0.0.1:${await listen(httpServer((path) => (served.tunnel++, tunnelBody(path))))}`;
  return {
    http,
    tcp,
    tunnel,
    served,
    async close() {
      for (const s of sockets) s.destroy();
      await Promise.all([
        ...https.map(
          (s) =>
            new Promise((r) => {
              s.closeAllConnections();
              s.close(r);
            }),
        ),
        ...tcps.map((s) => new Promise((r) => s.close(r))),
      ]);
    },
  };
}
