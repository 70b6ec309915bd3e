import { type ChildProcess, spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { makePki, type TestPki } from './tls.ts';
import { freePort } from './free-port.ts';

/**
 * Debian's pebble (Let's Encrypt's ACME test server) and pebble-challtestsrv
 * as its DNS (every name is 127.0.0.1), on 127.0.0.1 with free ports. Its
 * validator connects to `httpPort` for HTTP-01 and `tlsPort` for TLS-ALPN-01:
 * the daemon's plain and TLS edge ports. Pebble's own HTTPS listener has a
 * certificate of a throwaway CA (`listenerCaFile`: give it to the daemon as
 * NODE_EXTRA_CA_CERTS); the certificates it issues chain to `root()`.
 */
export interface Pebble {
  directory: string;
  listenerCaFile: string;
  listenerCa: string;
  /** Pebble's root CA (PEM), from its management endpoint. */
  root(): Promise<string>;
  logs(): string;
  stop(): Promise<void>;
}

function freeUdpPort(): Promise<number> {
  return new Promise((resolve) => {
    const socket = createSocket('udp4');
    socket.bind(0, '127.0.0.1', () => {
      const { port } = socket.address();
      socket.close(() => resolve(port));
    });
  });
}

function get(url: string, ca: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

const procs = new Set<ChildProcess>();
process.on('exit', () => {
  for (const p of procs) p.kill('SIGKILL');
});

function run(cmd: string, args: string[], env: Record<string, string>, out: { text: string }): ChildProcess {
  const proc = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  procs.add(proc);
  proc.stdout!.on('data', (c) => (out.text += c));
  proc.stderr!.on('data', (c) => (out.text += c));
  proc.once('exit', () => procs.delete(proc));
  return proc;
}

/** `dnsServer` (`host:port`): pebble resolves through that server (DNS-01) instead of a challtestsrv of its own. */
export async function startPebble(opts: {
  httpPort: number;
  tlsPort: number;
  env?: Record<string, string>;
  dnsServer?: string;
}): Promise<Pebble> {
  const pki: TestPki = makePki('pebble listener CA');
  const listener = pki.issue('pebble', 1, 2);
  const [listen, management, dns, dnsManagement] = await Promise.all([freePort(), freePort(), freeUdpPort(), freePort()]);
  const out = { text: '' };
  const dnsServer = opts.dnsServer
    ? undefined
    : run(
        'pebble-challtestsrv',
        [
          '-dns01',
          `127.0.0.1:${dns}`,
          '-http01',
          '',
          '-https01',
          '',
          '-tlsalpn01',
          '',
          '-management',
          `127.0.0.1:${dnsManagement}`,
          '-defaultIPv4',
          '127.0.0.1',
          '-defaultIPv6',
          '',
        ],
        {},
        out,
      );
  const config = join(pki.dir, 'pebble.json');
  writeFileSync(
    config,
    JSON.stringify({
      pebble: {
        listenAddress: `127.0.0.1:${listen}`,
        managementListenAddress: `127.0.0.1:${management}`,
        certificate: listener.certFile,
        privateKey: listener.keyFile,
        httpPort: opts.httpPort,
        tlsPort: opts.tlsPort,
        ocspResponderURL: '',
        externalAccountBindingRequired: false,
      },
    }),
  );
  const pebble = run(
    'pebble',
    ['-config', config, '-dnsserver', opts.dnsServer ?? `127.0.0.1:${dns}`],
    {
      PEBBLE_VA_NOSLEEP: '1',
      PEBBLE_WFE_NONCEREJECT: '0',
      PEBBLE_AUTHZREUSE: '0',
      ...opts.env,
    },
    out,
  );
  const directory = `https://127.0.0.1:${listen}/dir`;
  const stop = async () => {
    await Promise.all(
      [pebble, ...(dnsServer ? [dnsServer] : [])].map(
        (p) =>
          new Promise<void>((resolve) => {
            if (p.exitCode !== null || p.signalCode !== null) return resolve();
            p.once('exit', () => resolve());
            p.kill('SIGTERM');
          }),
      ),
    );
    pki.cleanup();
  };
  try {
    for (let i = 0; ; i++) {
      const ready = await get(directory, pki.ca).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ready) break;
      if (pebble.exitCode !== null || i > 200) throw new Error(`pebble did not start:\n${out.text}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    directory,
    listenerCaFile: pki.caFile,
    listenerCa: pki.ca,
    logs: () => out.text,
    stop,
    root: async () => (await get(`https://127.0.0.1:${management}/roots/0`, pki.ca)).text,
  };
}
