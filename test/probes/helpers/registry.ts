import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../helpers/free-port.ts';

export interface Registry {
  /** `127.0.0.1:<port>` */
  host: string;
  storage: string;
  stop(): Promise<void>;
}

export type RegistryAuth =
  | { kind: 'none' }
  | { kind: 'htpasswd'; username: string; password: string }
  | { kind: 'token'; realm: string; service: string; issuer: string; certFile: string };

/** bcrypt through the system's crypt(3) (libxcrypt), via perl: no extra package needed. */
function bcrypt(password: string): string {
  const salt = createHash('sha256')
    .update(password)
    .digest('base64')
    .replace(/[^A-Za-z0-9]/g, '')
    .slice(0, 22);
  return execFileSync('perl', ['-e', 'print crypt($ARGV[0], $ARGV[1])', password, `$2b$05$${salt}`], { encoding: 'utf8' });
}

/** Where a registry runs, when not on this host's loopback with storage of its own. */
export interface RegistryPlacement {
  /** Serve this storage (left in place on stop), e.g. what another registry was pushed. */
  storage?: string;
  /** Spawns the registry (inside a network namespace, say). */
  spawn?: (command: string, args: string[]) => ChildProcess;
  /** Whether its port accepts connections, seen from where it runs. */
  accepts?: (port: number) => Promise<boolean>;
}

/** Debian's `docker-registry` (distribution 2.8) on loopback, filesystem storage in a temp dir. */
export async function startRegistry(
  auth: RegistryAuth = { kind: 'none' },
  tls?: { cert: string; key: string },
  placement: RegistryPlacement = {},
): Promise<Registry> {
  const dir = mkdtempSync(join(tmpdir(), 'monctl-registry-'));
  const storage = placement.storage ?? join(dir, 'storage');
  if (!placement.storage) mkdirSync(storage);
  const port = await freePort();
  let authBlock = '';
  if (auth.kind === 'htpasswd') {
    writeFileSync(join(dir, 'htpasswd'), `${auth.username}:${bcrypt(auth.password)}\n`);
    authBlock = `auth:\n  htpasswd:\n    realm: test\n    path: ${join(dir, 'htpasswd')}\n`;
  } else if (auth.kind === 'token') {
    authBlock = `auth:\n  token:\n    realm: ${auth.realm}\n    service: ${auth.service}\n    issuer: ${auth.issuer}\n    rootcertbundle: ${auth.certFile}\n`;
  }
  const tlsBlock = tls ? `  tls:\n    certificate: ${tls.cert}\n    key: ${tls.key}\n` : '';
  const config = `version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: ${storage}\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:${port}\n${tlsBlock}${authBlock}`;
  writeFileSync(join(dir, 'config.yml'), config);
  const proc: ChildProcess = placement.spawn
    ? placement.spawn('/usr/bin/docker-registry', ['serve', join(dir, 'config.yml')])
    : spawn('/usr/bin/docker-registry', ['serve', join(dir, 'config.yml')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  proc.stderr!.on('data', (c) => (stderr += c));
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  for (let i = 0; ; i++) {
    if (proc.exitCode !== null) {
      await stop();
      throw new Error(`docker-registry exited: ${stderr}`);
    }
    try {
      if (placement.accepts) {
        if (!(await placement.accepts(port))) throw new Error('not yet');
      } else {
        await new Promise<void>((resolve, reject) => {
          const socket = connect(port, '127.0.0.1', () => {
            socket.destroy();
            resolve();
          });
          socket.once('error', reject);
        });
      }
      break;
    } catch {
      if (i > 200) {
        await stop();
        throw new Error(`docker-registry did not start: ${stderr}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return { host: `127.0.0.1:${port}`, storage, stop };
}

/** Where a blob's bytes live in the registry's filesystem storage. */
export function blobPath(registry: Registry, digest: string): string {
  const hex = digest.replace(/^sha256:/, '');
  return join(registry.storage, 'docker/registry/v2/blobs/sha256', hex.slice(0, 2), hex);
}

export function readJson(path: string): any {
  return JSON.parse(readFileSync(path, 'utf8'));
}
