/**
 * TLS for `npm run bench:probes -- --type tls`: resource i handshakes with one of a few node TLS
 * servers in a child process, on 127.0.0.1 with a certificate of a throwaway CA (openssl, as the
 * tests make them). The CA reaches the daemon and the baseline the same way, NODE_EXTRA_CA_CERTS
 * set in this process before either starts (both inherit it), so both verify the chain and the IP.
 *
 * Baseline: a bare `tls.connect` loop in a child process doing the probe's handshake and nothing
 * else: one client context made once (as the probe keeps one per minimum version), verification
 * on, no session reuse (neither side offers a session), the certificate's notAfter, the protocol
 * and the cipher read, then the connection closed.
 */
import { type AddressInfo, isIP } from 'node:net';
import { connect, createSecureContext, createServer } from 'node:tls';
import { makePki } from '../../test/helpers/tls.ts';
import type { ProbeTypeBench } from './probe-type.ts';
import { isEntry, pacedBaseline, runBaselineChild, startChild } from './probe-type-run.ts';

/** Servers the resources are spread over. */
const SERVERS = 4;

/** Child mode: SERVERS TLS servers with the certificate in argv's files; sends their ports, then answers `answered` with the connections so far. */
async function serve(certFile: string, keyFile: string): Promise<void> {
  const { readFileSync } = await import('node:fs');
  const context = { cert: readFileSync(certFile), key: readFileSync(keyFile) };
  let answered = 0;
  const ports: number[] = [];
  for (let s = 0; s < SERVERS; s++) {
    const server = createServer(context, (socket) => {
      socket.on('error', () => undefined);
      socket.end();
    });
    // Counted as the ClientHello is answered: a client that closes at once after its Finished
    // (as the probe does) resets the connection, and Linux drops the Finished still unread, so
    // the server's 'secureConnection' would miss most of them.
    server.on('connection', () => answered++);
    server.on('tlsClientError', () => undefined);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', 1024, r));
    ports.push((server.address() as AddressInfo).port);
  }
  process.on('message', () => process.send!(answered));
  process.send!(ports);
}

const context = createSecureContext({ minVersion: 'TLSv1.2' });

/** One bare handshake, verified, as the baseline does it. */
function handshake(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const host = '127.0.0.1';
    const socket = connect({ host, port, secureContext: context, ...(isIP(host) ? {} : { servername: host }) });
    const timer = setTimeout(() => done(false), 5_000);
    function done(ok: boolean) {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    }
    socket.once('secureConnect', () => {
      const notAfter = Date.parse(socket.getPeerCertificate().valid_to ?? '');
      done(socket.authorized && Number.isFinite(notAfter) && socket.getProtocol() !== null && socket.getCipher() !== undefined);
    });
    socket.once('error', () => done(false));
  });
}

const bench: ProbeTypeBench = {
  type: 'TLS',
  baselineName: 'a bare tls.connect loop',
  async start() {
    const pki = makePki('monctl bench TLS CA');
    const cert = pki.issue('bench', 1, 2);
    process.env.NODE_EXTRA_CA_CERTS = pki.caFile;
    const child = await startChild<number[]>(import.meta.filename, ['--serve', cert.certFile, cert.keyFile]);
    const ports = child.first;
    return {
      resource: (i) => ({ target: `127.0.0.1:${ports[i % ports.length]}`, options: { starttls: null, sni: null, minVersion: 'TLSv1.2' } }),
      answered: () => child.request<number>('answered'),
      stop: async () => {
        await child.stop();
        pki.cleanup();
      },
    };
  },
  baseline(targets, resources, perSecond, seconds) {
    const ports = [...new Set(Array.from({ length: Math.min(resources, SERVERS) }, (_, i) => targets.resource(i).target.split(':')[1]))];
    return runBaselineChild(import.meta.filename, ['--baseline', String(perSecond), String(seconds), ports.join(',')]);
  },
};
export default bench;

if (isEntry(import.meta.filename)) {
  const [mode, a, b, c] = process.argv.slice(2);
  if (mode === '--serve') await serve(a, b);
  else {
    const list = c.split(',').map(Number);
    await pacedBaseline(Number(a), Number(b), (i) => handshake(list[i % list.length]));
    process.exit(0);
  }
}
