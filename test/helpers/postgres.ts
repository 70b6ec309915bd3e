import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './free-port.ts';

/**
 * A throw-away PostgreSQL cluster from Debian's `postgresql` package: initdb
 * in a temp dir, the server on a free port of 127.0.0.1 (and its socket in the
 * temp dir), run as `nobody` when the tests run as root (PostgreSQL refuses
 * root). Trust authentication: only this machine's loopback reaches it.
 */
export interface PgCluster {
  /** The URL of a database of the cluster (superuser `postgres`). */
  url(database: string): string;
  /** A new empty database; its URL. */
  createDatabase(prefix?: string): Promise<string>;
  dropDatabase(url: string): Promise<void>;
  /** SQL as the superuser on the `postgres` database. */
  admin<T extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<T[]>;
  stop(): Promise<void>;
  /** Stops the server abruptly (SIGKILL): the "database lost" case. */
  kill(): void;
  /** Starts it again on the same port and directory after kill(). */
  restart(): Promise<void>;
  dir: string;
  port: number;
}

/** The newest PostgreSQL server binaries on this machine, 15 or later. */
export function postgresBinDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .map(Number)
        .filter((v) => v >= 15)
        .sort((a, b) => b - a)
    : [];
  if (versions.length === 0) {
    throw new Error(
      'PostgreSQL 15+ is not installed (Debian package postgresql); the test setup installs it as root (test/setup/provision.ts)',
    );
  }
  return join(root, String(versions[0]), 'bin');
}

/** nobody's uid and gid when this is root (PostgreSQL will not run as root), else undefined. */
function unprivileged(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('nobody:'));
  const [, , uid, gid] = line?.split(':') ?? [];
  if (!uid) throw new Error('no user nobody to run PostgreSQL as');
  return { uid: Number(uid), gid: Number(gid) };
}

export async function startPgCluster(): Promise<PgCluster> {
  const bin = postgresBinDir();
  const dir = mkdtempSync(join(tmpdir(), 'monctl-pg-'));
  const user = unprivileged();
  if (user) chownSync(dir, user.uid, user.gid);
  const data = join(dir, 'data');
  const init = spawnSync(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync'], {
    encoding: 'utf8',
    ...(user ?? {}),
    cwd: dir,
    env: { ...process.env, HOME: dir },
  });
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed: ${init.stderr || init.error?.message}`);
  }
  let port = await freePort();
  let proc: ChildProcess | undefined;
  let log = '';
  const launch = async () => {
    log = '';
    proc = spawn(
      join(bin, 'postgres'),
      [
        '-D',
        data,
        '-p',
        String(port),
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        `unix_socket_directories=${dir}`,
        // A test cluster: durability off (a crash of the tests loses nothing that matters), room for many daemons.
        '-c',
        'fsync=off',
        '-c',
        'synchronous_commit=off',
        '-c',
        'full_page_writes=off',
        '-c',
        'max_connections=400',
        '-c',
        'shared_buffers=64MB',
      ],
      { ...(user ?? {}), cwd: dir, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, HOME: dir } },
    );
    proc.stderr!.on('data', (chunk) => (log = (log + chunk).slice(-8000)));
    await waitReady(`postgres://postgres@127.0.0.1:${port}/postgres`, proc, () => log);
  };
  try {
    await launch();
  } catch (err) {
    proc?.kill('SIGKILL');
    // Another process may have taken the port between freePort() and the bind: once more on another.
    port = await freePort();
    try {
      await launch();
    } catch {
      proc?.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  }
  const url = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  const admin = async <T extends pg.QueryResultRow>(sql: string, params: unknown[] = []) => {
    const client = new pg.Client({ connectionString: url('postgres') });
    await client.connect();
    try {
      return (await client.query<T>(sql, params)).rows;
    } finally {
      await client.end();
    }
  };
  const stopped = () =>
    new Promise<void>((resolve) => {
      if (!proc || proc.exitCode !== null || proc.signalCode !== null) return resolve();
      proc.once('exit', () => resolve());
    });
  return {
    dir,
    port,
    url,
    admin,
    async createDatabase(prefix = 'monctl') {
      const name = `${prefix}_${randomBytes(6).toString('hex')}`;
      await admin(`CREATE DATABASE ${name}`);
      return url(name);
    },
    async dropDatabase(dbUrl: string) {
      const name = new URL(dbUrl).pathname.slice(1);
      await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
    },
    kill() {
      proc?.kill('SIGKILL');
    },
    async restart() {
      await stopped();
      // Backends of a killed postmaster may hold its shared memory a moment longer, and the
      // new postmaster refuses to start beside them: a few tries, on the same port.
      for (let attempt = 1; ; attempt++) {
        try {
          return await launch();
        } catch (err) {
          if (attempt >= 10) throw err;
          await new Promise((r) => setTimeout(r, 500));
        }
      }
    },
    async stop() {
      const done = stopped();
      proc?.kill('SIGINT'); // fast shutdown: disconnects clients
      await done;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitReady(url: string, proc: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`postgres exited: ${log()}`);
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.end();
      return;
    } catch (err) {
      await client.end().catch(() => {});
      if (Date.now() > deadline) throw new Error(`postgres did not start: ${(err as Error).message}\n${log()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
