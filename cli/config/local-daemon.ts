import { dirname, join, resolve } from 'node:path';
import { ADMIN_KEY_FILE, DEFAULT_SERVER, defaultDataDir } from '../../src/config/paths.ts';
import { ExitCode, MonctlError } from '../../src/errors.ts';

// node:fs through getBuiltinModule: its ESM facade costs every cold start ~6 ms of CPU.
const { readFileSync } = process.getBuiltinModule('node:fs');

/**
 * The daemon on this machine, found as `monctl daemon reset-admin` finds it:
 * its settings `listen`, `dataDir` and `tlsCert` from `MONCTL_LISTEN`,
 * `MONCTL_DATA_DIR`, `MONCTL_TLS_CERT`, else from the YAML file named by
 * `MONCTL_CONFIG` (relative paths against the file's folder), else the
 * defaults. A daemon started with `--listen`/`--data-dir` flags leaves no
 * trace the CLI could read: the connection error names these variables.
 */
export interface LocalDaemon {
  server: string;
  serverSource: string;
  keyFile: string;
}

/** The keys of the daemon's config file the CLI reads (the daemon checks the whole file). */
interface FileHints {
  path: string;
  listen?: string;
  dataDir?: string;
  tlsCert?: string;
}

let fileHints: FileHints | undefined;

/**
 * Reads the file named by MONCTL_CONFIG, once, before the connection is
 * resolved: YAML costs a cold start its parser, so only when the variable is set.
 * A file that cannot be read or parsed is a usage error naming it.
 */
export async function loadDaemonConfig(env = process.env): Promise<void> {
  const path = env.MONCTL_CONFIG;
  if (!path || fileHints?.path === path) return;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new MonctlError('config', `MONCTL_CONFIG: cannot read ${path}: ${(err as Error).message}`, ExitCode.usage);
  }
  let doc: unknown;
  try {
    doc = (await import('yaml')).parse(text);
  } catch (err) {
    throw new MonctlError('config', `MONCTL_CONFIG: ${path} is not valid YAML: ${(err as Error).message}`, ExitCode.usage);
  }
  const map = (doc && typeof doc === 'object' ? doc : {}) as Record<string, unknown>;
  const str = (key: string) => (typeof map[key] === 'string' && map[key] !== '' ? (map[key] as string) : undefined);
  const rel = (p: string | undefined) => (p === undefined ? undefined : resolve(dirname(resolve(path)), p));
  fileHints = { path, listen: str('listen'), dataDir: rel(str('dataDir')), tlsCert: str('tlsCert') };
}

/** `0.0.0.0:9000` → `http://127.0.0.1:9000`: a wildcard address is reached on loopback. */
export function serverOfListen(listen: string, tls: boolean): string | undefined {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(listen.trim());
  if (!m) return undefined;
  let host = m[1] ?? (m[2] || '0.0.0.0');
  if (host === '0.0.0.0') host = '127.0.0.1';
  if (host === '::') host = '::1';
  return `${tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${m[3]}`;
}

/** Where the local daemon listens and keeps its admin key, and what said so. */
export function localDaemon(env = process.env): LocalDaemon {
  const file = env.MONCTL_CONFIG && fileHints?.path === env.MONCTL_CONFIG ? fileHints : undefined;
  const tls = Boolean(env.MONCTL_TLS_CERT || file?.tlsCert);
  let server = DEFAULT_SERVER;
  let serverSource = 'default';
  if (env.MONCTL_LISTEN) [server, serverSource] = [serverOfListen(env.MONCTL_LISTEN, tls) ?? '', 'env MONCTL_LISTEN'];
  else if (file?.listen) [server, serverSource] = [serverOfListen(file.listen, tls) ?? '', `MONCTL_CONFIG ${file.path}: listen`];
  else if (tls) server = server.replace(/^http:/, 'https:');
  if (!server) throw new MonctlError('usage', `${serverSource} is not HOST:PORT`, ExitCode.usage);
  const dataDir = env.MONCTL_DATA_DIR || file?.dataDir || defaultDataDir(env);
  return { server, serverSource, keyFile: join(dataDir, ADMIN_KEY_FILE) };
}
