import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { type AddressInfo, createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { createServer, type Server, type TlsOptions as ServerOptions } from 'node:tls';
import { createProbeRunner, type Prober } from '../../../src/probes/runner.ts';
import type { ProbeInput, ProbeResult, TlsOptions } from '../../../src/probes/types.ts';
import type { TestPki } from '../../helpers/tls.ts';

/** TLS check options with the defaults of docs/API.md#check-types. */
export const tlsDefaults = (o: Partial<TlsOptions> = {}): TlsOptions => ({ starttls: null, sni: null, minVersion: 'TLSv1.2', ...o });

/** A runner for TLS checks; `check` runs one through it as the daemon would. */
export function tlsChecker(timeoutMs = 5_000): {
  runner: Prober;
  check(target: string, o?: Partial<TlsOptions>, extra?: Partial<ProbeInput>, report?: boolean): Promise<ProbeResult>;
} {
  const runner = createProbeRunner({ timeoutMs, credential: async () => undefined });
  return {
    runner,
    check: (target, o, extra, report) =>
      runner.probe({ resourceId: 1, type: 'TLS', target, skipTLS: false, recursive: false, options: tlsDefaults(o), ...extra }, { report }),
  };
}

/** A self-signed certificate for 127.0.0.1 (no CA the checks trust), made by openssl in the PKI's dir. */
export function selfSigned(pki: TestPki): { cert: string; key: string } {
  const args = 'req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout self.key -out self.pem -days 2';
  const run = spawnSync('openssl', [...args.split(' '), '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], {
    cwd: pki.dir,
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`openssl: ${run.stderr}`);
  return { cert: readFileSync(join(pki.dir, 'self.pem'), 'utf8'), key: readFileSync(join(pki.dir, 'self.key'), 'utf8') };
}

export interface Target {
  port: number;
  /** Stops listening and drops the connections still open. */
  close(): Promise<void>;
}

/** A listening server whose connections are tracked, so that close() does not wait on them. */
async function listen(server: NetServer): Promise<Target> {
  const open = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((r) => {
        for (const socket of open) socket.destroy();
        server.close(() => r());
      }),
  };
}

/** A node TLS server on 127.0.0.1 that closes each connection once the handshake is done. */
export function tlsServer(options: ServerOptions): Promise<Target> {
  const server: Server = createServer(options, (socket) => socket.end());
  server.on('tlsClientError', () => undefined);
  return listen(server);
}

/** A plain TCP server on 127.0.0.1 handing each connection to `onSocket`. */
export function plainServer(onSocket: (socket: Socket) => void): Promise<Target> {
  return listen(createNetServer(onSocket));
}
