import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A throwaway CA made with openssl(1), with a real `openssl ocsp` responder
 * on 127.0.0.1 answering from the CA's index.txt (which the responder reads
 * again when it changes). Leaves may name the responder in their Authority
 * Information Access, and be RSA or P-256.
 */
export interface OcspPki {
  dir: string;
  ca: string;
  /** http://127.0.0.1:PORT, the responder. */
  responderUrl: string;
  /** A leaf for `names` (DNS names or IP addresses), in the index as valid; `ocsp`: its AIA names the responder (or that URL). */
  issue(
    name: string,
    serial: number,
    opts: { names: string[]; rsa?: boolean; ocsp?: boolean | string },
  ): { cert: string; key: string; certFile: string; keyFile: string };
  /** Marks the leaf revoked in the index: the responder answers "revoked" from its next request. */
  revoke(serial: number): void;
  /** Requests the responder has answered. */
  answered(): number;
  /** Stops the responder (the CA stays). */
  stopResponder(): void;
  /** Another responder on the same index, signing with a delegated OCSP signer of the CA or a stranger's key; its URL. */
  otherResponder(signer: 'delegate' | 'stranger'): Promise<string>;
  close(): void;
}

function openssl(args: string[], cwd: string): void {
  const run = spawnSync('openssl', args, { cwd, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`openssl ${args.join(' ')}: ${run.stderr}`);
}

const hex = (serial: number) => serial.toString(16).toUpperCase().padStart(4, '0');
/** index.txt's time format: YYMMDDHHMMSSZ. */
const indexTime = (ms: number) => new Date(ms).toISOString().replace(/^\d\d|[-:T]|\.\d+/g, '');

export async function startOcspPki(): Promise<OcspPki> {
  const dir = mkdtempSync(join(tmpdir(), 'monctl-ocsp-'));
  openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
      '-days',
      '2',
      '-subj',
      '/CN=monctl OCSP test CA',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign,digitalSignature',
    ],
    dir,
  );
  const rows = new Map<number, string>();
  // A new file renamed over the old one: the responder notices a new inode, even within the same second.
  const writeIndex = () => {
    writeFileSync(join(dir, 'index.txt.new'), [...rows.values()].map((r) => `${r}\n`).join(''));
    renameSync(join(dir, 'index.txt.new'), join(dir, 'index.txt'));
  };
  writeIndex();
  let answered = 0;
  const responders: ChildProcess[] = [];
  // -nmin 1: every answer's nextUpdate is a minute away. -port 0: the OS picks the port, printed as ACCEPT.
  const startResponder = async (signer: string) => {
    const proc = spawn(
      'openssl',
      [
        'ocsp',
        '-index',
        'index.txt',
        '-port',
        '0',
        '-rsigner',
        `${signer}.pem`,
        '-rkey',
        `${signer}.key`,
        '-CA',
        'ca.pem',
        '-nmin',
        '1',
        '-ignore_err',
      ],
      { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    responders.push(proc);
    let output = '';
    const port = await new Promise<number>((resolve, reject) => {
      const read = (chunk: Buffer) => {
        output += chunk.toString();
        const match = /ACCEPT .*:(\d+)/.exec(output);
        if (match) resolve(Number(match[1]));
      };
      proc.stdout!.on('data', read);
      proc.stderr!.on('data', read);
      proc.once('exit', (code) => reject(new Error(`openssl ocsp exited with ${code}: ${output}`)));
    });
    proc.stderr!.on('data', (chunk: Buffer) => (answered += chunk.toString().split('Received request').length - 1));
    return { proc, url: `http://127.0.0.1:${port}` };
  };
  const main = await startResponder('ca');
  const responderUrl = main.url;
  return {
    dir,
    ca: readFileSync(join(dir, 'ca.pem'), 'utf8'),
    responderUrl,
    issue(name, serial, opts) {
      const ext = [
        `subjectAltName=${opts.names.map((n) => (isIP(n) ? `IP:${n}` : `DNS:${n}`)).join(',')}`,
        'basicConstraints=CA:FALSE',
        'extendedKeyUsage=serverAuth',
        ...(opts.ocsp ? [`authorityInfoAccess=OCSP;URI:${opts.ocsp === true ? responderUrl : opts.ocsp}`] : []),
      ];
      writeFileSync(join(dir, `${name}.ext`), `${ext.join('\n')}\n`);
      const key = opts.rsa ? ['-newkey', 'rsa:2048'] : ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'];
      openssl(['req', '-new', ...key, '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${opts.names[0]}`], dir);
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
          `0x${hex(serial)}`,
          '-days',
          '1',
          '-extfile',
          `${name}.ext`,
          '-out',
          `${name}.pem`,
        ],
        dir,
      );
      rows.set(serial, `V\t${indexTime(Date.now() + 86_400_000)}\t\t${hex(serial)}\tunknown\t/CN=${opts.names[0]}`);
      writeIndex();
      const certFile = join(dir, `${name}.pem`);
      const keyFile = join(dir, `${name}.key`);
      return { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8'), certFile, keyFile };
    },
    revoke(serial) {
      const row = rows.get(serial);
      if (!row) throw new Error(`serial ${serial} was not issued`);
      const [, expires, , ...rest] = row.split('\t');
      rows.set(serial, ['R', expires, `${indexTime(Date.now() - 1000)},keyCompromise`, ...rest].join('\t'));
      writeIndex();
    },
    answered: () => answered,
    stopResponder: () => main.proc.kill(),
    async otherResponder(signer) {
      // A certificate the CA issued for OCSP signing only, or a self-signed stranger's.
      const ext = signer === 'delegate' ? ['-CA', 'ca.pem', '-CAkey', 'ca.key', '-extfile', 'signer.ext'] : ['-signkey', 'stranger.key'];
      writeFileSync(join(dir, 'signer.ext'), 'basicConstraints=CA:FALSE\nextendedKeyUsage=OCSPSigning\n');
      openssl(
        [
          'req',
          '-new',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:prime256v1',
          '-nodes',
          '-keyout',
          `${signer}.key`,
          '-out',
          `${signer}.csr`,
          '-subj',
          `/CN=OCSP ${signer}`,
        ],
        dir,
      );
      openssl(['x509', '-req', '-in', `${signer}.csr`, ...ext, '-days', '1', '-out', `${signer}.pem`], dir);
      return (await startResponder(signer)).url;
    },
    close() {
      for (const proc of responders) proc.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
