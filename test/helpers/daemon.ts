import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Agent } from 'undici';
import { ApiClient, type Credential } from '../../src/client/api-client.ts';
import { databaseFor, dropDatabaseFor } from './test-database.ts';

export const ROOT = resolve(import.meta.dirname, '../..');
export const ADMIN_PASSWORD = 'test-admin-password-1';

export interface TestDaemon {
  url: string;
  edgeUrl: string;
  /** The HTTPS edge, when started with --edge-tls-listen. */
  edgeTlsUrl?: string;
  dataDir: string;
  /** The PostgreSQL database it uses (the postgres test project, or a test's own); undefined: SQLite in dataDir. */
  databaseUrl?: string;
  adminKey: string;
  proc: ChildProcess;
  /** Every stdout line so far, parsed as JSON where it is JSON. */
  logs: Array<Record<string, unknown>>;
  stderr: () => string;
  client(credential?: Credential): ApiClient;
  /** An ApiClient with the bootstrap ADMIN key. */
  admin: ApiClient;
  /** Sends the signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface StartOptions {
  /** Reuse a data dir (restart tests); otherwise a fresh temp dir, removed on stop. */
  dataDir?: string;
  env?: Record<string, string>;
  args?: string[];
  /** The executable to run instead of this checkout's bin/monctl (an installed package's). */
  command?: string;
  /** PEM CA that the clients trust, for a daemon started with --tls-cert (its URL is then https://). */
  ca?: string;
  /**
   * A PostgreSQL database to use (pods sharing one); the test owns it. Without
   * it, the postgres test project gives each data dir a fresh database, and the
   * sqlite one uses the data dir. `''`: SQLite in the data dir, whatever the project.
   */
  databaseUrl?: string;
  /** A second pod on a database bootstraps nothing: its admin key is this daemon's. */
  adminKeyFrom?: TestDaemon;
  /** How long to wait for "listening" (default 20 s): a daemon restarted on a million resources logs it when its schedule is loaded. */
  startTimeoutMs?: number;
}

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const proc of running) proc.kill('SIGKILL');
});

/** Runs `bin/monctl daemon` (the shipped wrapper, with its Node flags) on 127.0.0.1 with OS-chosen ports. */
export async function startDaemon(opts: StartOptions = {}): Promise<TestDaemon> {
  const ownDir = opts.dataDir === undefined;
  const base = ownDir ? mkdtempSync(join(tmpdir(), 'monctl-test-')) : undefined;
  const dataDir = opts.dataDir ?? join(base!, 'data');
  const explicit =
    opts.databaseUrl !== undefined || opts.env?.MONCTL_DATABASE_URL !== undefined || (opts.args ?? []).includes('--database');
  const databaseUrl = opts.databaseUrl ?? opts.env?.MONCTL_DATABASE_URL ?? (explicit ? undefined : await databaseFor(dataDir));
  const dropOwn = async () => {
    if (ownDir && !explicit) await dropDatabaseFor(dataDir);
  };
  const proc = spawn(
    opts.command ?? join(ROOT, 'bin/monctl'),
    ['daemon', '--listen', '127.0.0.1:0', '--edge-listen', '127.0.0.1:0', '--data-dir', dataDir, ...(opts.args ?? [])],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        MONCTL_ADMIN_PASSWORD: ADMIN_PASSWORD,
        MONCTL_CHECK_RESPONSES: '1',
        TZ: 'UTC',
        ...(databaseUrl ? { MONCTL_DATABASE_URL: databaseUrl } : {}),
        ...opts.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  running.add(proc);
  const logs: Array<Record<string, unknown>> = [];
  let stderr = '';
  proc.stderr!.on('data', (chunk) => (stderr += chunk));

  const listening = new Promise<Record<string, unknown>>((resolveListen, reject) => {
    let buffer = '';
    const ms = opts.startTimeoutMs ?? 20_000;
    const timer = setTimeout(() => reject(new Error(`daemon did not start in ${ms / 1000} s\n${stderr}`)), ms);
    proc.stdout!.on('data', (chunk) => {
      buffer += chunk;
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        let entry: Record<string, unknown>;
        try {
          entry = JSON.parse(line);
        } catch {
          entry = { raw: line };
        }
        logs.push(entry);
        if (entry.msg === 'listening') {
          clearTimeout(timer);
          resolveListen(entry);
        }
      }
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`daemon exited with ${code} before listening\n${stderr}`));
    });
  });

  let info: Record<string, unknown>;
  try {
    info = await listening;
  } catch (err) {
    // A daemon that failed to start leaves neither a process nor a temp dir behind.
    proc.kill('SIGKILL');
    running.delete(proc);
    if (ownDir) rmSync(base!, { recursive: true, force: true });
    await dropOwn();
    throw err;
  }
  const url = String(info.api);
  // A daemon that dies under a test shows up as ECONNREFUSED in it: say why, in the run's output.
  let stopping = false;
  proc.once('exit', (code, signal) => {
    if (!stopping) console.error(`daemon ${url} exited (${signal ?? code}) without stop():\n${stderr.slice(-4000)}`);
  });
  const adminKey = opts.adminKeyFrom?.adminKey ?? readFileSync(join(dataDir, 'admin-api-key'), 'utf8').trim();
  const dispatcher = opts.ca ? new Agent({ connect: { ca: opts.ca } }) : undefined;
  const client = (credential?: Credential) => new ApiClient({ server: url, credential, dispatcher });
  return {
    url,
    edgeUrl: String(info.edge),
    ...(info.edgeTls ? { edgeTlsUrl: String(info.edgeTls) } : {}),
    dataDir,
    databaseUrl: databaseUrl || undefined,
    adminKey,
    proc,
    logs,
    stderr: () => stderr,
    client,
    admin: client({ kind: 'api-key', token: adminKey }),
    stop(signal = 'SIGTERM') {
      stopping = true;
      return new Promise((done) => {
        const finish = (code: number | null) => {
          running.delete(proc);
          void dispatcher?.destroy();
          if (ownDir) rmSync(base!, { recursive: true, force: true });
          void dropOwn().finally(() => done(code));
        };
        if (proc.exitCode !== null || proc.signalCode !== null) return finish(proc.exitCode);
        proc.once('exit', (code) => finish(code));
        proc.kill(signal);
      });
    },
  };
}
