import { spawn, spawnSync } from 'node:child_process';
import { connect, type TLSSocket } from 'node:tls';

/** What one `openssl s_client` handshake got. */
export interface Probe {
  ok: boolean;
  protocol?: string;
  cipher?: string;
  /** `Server Temp Key: X25519, 253 bits` → `X25519, 253 bits`. */
  tempKey?: string;
  /** s_client's whole output (with -status: the stapled OCSP response, decoded). */
  output: string;
}

/**
 * One handshake with `openssl s_client` to 127.0.0.1:port, SNI `servername`,
 * the client's options in `args` (`-tls1_2 -cipher X`, `-groups`, `-status`).
 * stdin is empty: it handshakes, prints, and leaves.
 */
export function probe(port: number, servername: string, args: string[]): Promise<Probe> {
  return new Promise((resolve, reject) => {
    const child = spawn('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, '-servername', servername, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const timer = setTimeout(() => child.kill(), 10_000);
    child.on('error', reject);
    child.on('close', () => {
      clearTimeout(timer);
      const cipher = /Cipher is (\S+)/.exec(output)?.[1];
      const ok = cipher !== undefined && cipher !== '(NONE)';
      resolve({
        ok,
        output,
        ...(ok ? { cipher } : {}),
        protocol: /^\s*Protocol\s*:\s*(\S+)/m.exec(output)?.[1] ?? /^New, (TLSv[\d.]+),/m.exec(output)?.[1],
        tempKey: /Server Temp Key: (.+)/.exec(output)?.[1]?.trim(),
      });
    });
  });
}

/** Every TLS 1.2 cipher suite this openssl knows, at any security level (TLS 1.3 ones left out). */
export function allTls12Ciphers(): string[] {
  const run = spawnSync('openssl', ['ciphers', '-tls1_2', 'ALL:COMPLEMENTOFALL:@SECLEVEL=0'], { encoding: 'utf8' });
  return run.stdout
    .trim()
    .split(':')
    .filter((c) => c && !c.startsWith('TLS_'));
}

/**
 * The TLS 1.2 suites `port` accepts for `servername`: one handshake per suite
 * that openssl knows, as testssl's -E does, made with node's TLS client (an
 * openssl process per suite costs half a second on a loaded machine). Suites
 * node's OpenSSL lacks are skipped; `openssl s_client` probes by class
 * (plain RSA, CBC) confirm the answer with another client.
 */
export async function acceptedTls12Ciphers(port: number, servername: string): Promise<string[]> {
  const handshake = (cipher: string) =>
    new Promise<boolean>((resolve) => {
      let socket: TLSSocket;
      try {
        socket = connect({
          host: '127.0.0.1',
          port,
          servername,
          ciphers: `${cipher}:@SECLEVEL=0`,
          minVersion: 'TLSv1',
          maxVersion: 'TLSv1.2',
          rejectUnauthorized: false,
        });
      } catch {
        return resolve(false); // not a suite of node's OpenSSL
      }
      socket.once('secureConnect', () => {
        resolve(socket.getCipher().name === cipher);
        socket.destroy();
      });
      socket.once('error', () => resolve(false));
    });
  const ciphers = allTls12Ciphers();
  const accepted: string[] = [];
  for (let i = 0; i < ciphers.length; i += 8) {
    const batch = ciphers.slice(i, i + 8);
    const results = await Promise.all(batch.map(handshake));
    results.forEach((ok, j) => ok && accepted.push(batch[j]));
  }
  return accepted.sort();
}
