import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';
import { operations } from '../../src/api/operations.ts';
import type { TestDaemon } from './daemon.ts';
import { sseParser } from './sse-frames.ts';

/**
 * A throwaway PKI made with openssl(1) in a temp dir: one CA, and server
 * certificates for 127.0.0.1 (subjectAltName IP:127.0.0.1) that it signs.
 */
export interface TestPki {
  dir: string;
  caFile: string;
  ca: string;
  /** A new key and certificate valid for `days` (default 1); `serial` tells them apart. */
  issue(name: string, serial: number, days?: number): { certFile: string; keyFile: string; cert: string; key: string };
  /** A new key and certificate for DNS names (wildcards too), signed by the CA. */
  issueNames(
    name: string,
    serial: number,
    dnsNames: string[],
    days?: number,
  ): { certFile: string; keyFile: string; cert: string; key: string };
  cleanup(): void;
}

function openssl(args: string[], cwd: string): void {
  const run = spawnSync('openssl', args, { cwd, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`openssl ${args.join(' ')}: ${run.stderr}`);
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

export function makePki(caName = 'monctl test CA'): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'monctl-pki-'));
  openssl(['req', '-x509', ...EC, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', `/CN=${caName}`], dir);
  writeFileSync(join(dir, 'server.ext'), 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n');
  const caFile = join(dir, 'ca.pem');
  return {
    dir,
    caFile,
    ca: readFileSync(caFile, 'utf8'),
    issue(name, serial, days = 1) {
      openssl(['req', '-new', ...EC, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=127.0.0.1/O=${name}`], dir);
      openssl(
        [
          'x509',
          '-req',
          '-in',
          `${name}.csr`,
          '-CA',
          'ca.pem',
          '-CAkey',
          'ca.key',
          '-set_serial',
          String(serial),
          '-days',
          String(days),
          '-extfile',
          'server.ext',
          '-out',
          `${name}.pem`,
        ],
        dir,
      );
      const certFile = join(dir, `${name}.pem`);
      const keyFile = join(dir, `${name}.key`);
      return { certFile, keyFile, cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8') };
    },
    issueNames(name, serial, dnsNames, days = 1) {
      writeFileSync(
        join(dir, `${name}.ext`),
        `subjectAltName=${dnsNames.map((n) => `DNS:${n}`).join(',')}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`,
      );
      openssl(['req', '-new', ...EC, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${dnsNames[0]}`], dir);
      openssl(
        [
          'x509',
          '-req',
          '-in',
          `${name}.csr`,
          '-CA',
          'ca.pem',
          '-CAkey',
          'ca.key',
          '-set_serial',
          String(serial),
          '-days',
          String(days),
          '-extfile',
          `${name}.ext`,
          '-out',
          `${name}.pem`,
        ],
        dir,
      );
      const certFile = join(dir, `${name}.pem`);
      const keyFile = join(dir, `${name}.key`);
      return { certFile, keyFile, cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8') };
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** The certificate a new TLS connection to 127.0.0.1:port is served (verified against `ca`). */
export function servedCertificate(port: number, ca: string): Promise<{ serial: string; fingerprint256: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ca }, () => {
      const peer = socket.getPeerCertificate();
      socket.destroy();
      resolve({ serial: peer.serialNumber, fingerprint256: peer.fingerprint256 });
    });
    socket.on('error', reject);
  });
}

export interface HttpsStream {
  events: Array<{ event: string; data: any }>;
  socket: TLSSocket;
  /** True once the response or its connection ended. */
  ended(): boolean;
  close(): void;
}

/** An SSE stream over https on one connection of its own, parsed frame by frame. */
export function httpsStream(url: string, headers: Record<string, string>, ca: string): Promise<HttpsStream> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca, agent: false, headers: { accept: 'text/event-stream', ...headers } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`SSE ${url}: ${res.statusCode}`));
      const events: HttpsStream['events'] = [];
      let ended = false;
      const parse = sseParser();
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => events.push(...parse(chunk)));
      res.on('error', () => (ended = true));
      res.on('close', () => (ended = true));
      resolve({ events, socket: res.socket as TLSSocket, ended: () => ended, close: () => req.destroy() });
    });
    req.on('error', reject);
    req.end();
  });
}

/** A new agent slot on the daemon and its registration token in a file (for `monctl agent --token-file`). */
export async function agentSlot(d: TestDaemon, name: string, dir: string): Promise<{ id: number; tokenFile: string }> {
  const agent = await d.admin.call(operations.createAgent, { body: { name } });
  const { token } = await d.admin.call(operations.rotateAgentToken, { params: { id: agent.id } });
  const tokenFile = join(dir, `${name}.token`);
  writeFileSync(tokenFile, token, { mode: 0o600 });
  return { id: agent.id, tokenFile };
}
