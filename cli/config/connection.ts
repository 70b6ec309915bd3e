import { join } from 'node:path';
import { defaultConfigDir } from '../../src/config/paths.ts';
import { ExitCode, MonctlError } from '../../src/errors.ts';
import { localDaemon } from './local-daemon.ts';

// node:fs through getBuiltinModule: its ESM facade costs every cold start ~6 ms of CPU.
const { readFileSync } = process.getBuiltinModule('node:fs');

/** One saved connection: a server and the API key the CLI uses for it. */
export interface Context {
  server: string;
  apiKey?: string;
  /** Who the key belongs to and its role, as the daemon said at login (for `context list`). */
  user?: string;
  role?: string;
  keyId?: number | null;
  /** The key was created by `login --username`; `logout` revokes it. */
  managed?: boolean;
  /** A CA file (absolute path) that signed the server's certificate, trusted besides the default roots. */
  caFile?: string;
}

export interface ConfigFile {
  current?: string;
  contexts: Record<string, Context>;
}

export const CONFIG_NAME = 'config.json';

export function configDir(env = process.env): string {
  return defaultConfigDir(env);
}

export function configPath(env = process.env): string {
  return join(configDir(env), CONFIG_NAME);
}

/**
 * The config file, JSON (not YAML: parsing YAML would cost every cold start
 * the yaml package). A missing file is an empty config.
 */
export function readConfig(env = process.env): ConfigFile {
  let text: string;
  try {
    text = readFileSync(configPath(env), 'utf8');
  } catch {
    return { contexts: {} };
  }
  try {
    const parsed = JSON.parse(text) as ConfigFile;
    return { current: parsed.current, contexts: parsed.contexts ?? {} };
  } catch {
    throw new MonctlError('config', `${configPath(env)} is not valid JSON; fix or remove it`);
  }
}

/**
 * Where the CLI connects and with which credential (README.md#the-cli).
 * Precedence: flags, then environment, then the current context, then the
 * local daemon (cli/config/local-daemon.ts: MONCTL_LISTEN, MONCTL_CONFIG's
 * listen, else `http://127.0.0.1:8080`, with `<data dir>/admin-api-key`).
 */
export interface Connection {
  server: string;
  serverSource: string;
  apiKey: string | undefined;
  credentialSource: string;
  /** The context in use, when one supplied the server or the key. */
  context: string | undefined;
  /** ADMIN or USER, read from the key's own claims; a hint for choosing views, the daemon decides. */
  role: string | undefined;
  /** A CA file to trust besides the default roots (src/tls/ca-file.ts), and where it was named. */
  caFile: string | undefined;
  caFileSource: string | undefined;
}

export interface ConnectionFlags {
  server?: string;
  context?: string;
  caFile?: string;
}

const normalise = (url: string) => url.replace(/\/+$/, '');

export function localKeyPath(env = process.env): string {
  return localDaemon(env).keyFile;
}

function isLoopback(server: string): boolean {
  try {
    const host = new URL(server).hostname.replace(/^\[|\]$/g, '');
    return host === 'localhost' || host === '::1' || /^127\./.test(host);
  } catch {
    return false;
  }
}

export function resolveConnection(flags: ConnectionFlags, env = process.env): Connection {
  const config = readConfig(env);
  const contextName = flags.context ?? env.MONCTL_CONTEXT ?? config.current;
  const ctx = contextName ? config.contexts[contextName] : undefined;
  if (flags.context && !ctx)
    throw new MonctlError('usage', `no context named "${flags.context}" (see monctl context list)`, ExitCode.usage);

  let server: string;
  let serverSource: string;
  if (flags.server) [server, serverSource] = [flags.server, 'flag --server'];
  else if (env.MONCTL_SERVER) [server, serverSource] = [env.MONCTL_SERVER, 'env MONCTL_SERVER'];
  else if (ctx) [server, serverSource] = [ctx.server, `context ${contextName}`];
  else ({ server, serverSource } = localDaemon(env));
  server = normalise(server);
  try {
    new URL(server);
  } catch {
    throw new MonctlError('usage', `invalid server URL: ${server}`, ExitCode.usage);
  }

  let apiKey: string | undefined;
  let credentialSource = 'none';
  let usedContext: string | undefined;
  if (env.MONCTL_API_KEY) [apiKey, credentialSource] = [env.MONCTL_API_KEY.trim(), 'env MONCTL_API_KEY'];
  // A context's key goes only to that context's server, never to one named by a flag or env.
  else if (ctx?.apiKey && normalise(ctx.server) === server) {
    [apiKey, credentialSource, usedContext] = [ctx.apiKey, `context ${contextName}`, contextName];
  } else if (isLoopback(server)) {
    const path = localKeyPath(env);
    try {
      apiKey = readFileSync(path, 'utf8').trim() || undefined;
      if (apiKey) credentialSource = `local file ${path}`;
    } catch {
      // not readable: no credential
    }
  }
  if (serverSource.startsWith('context')) usedContext = contextName;

  // Like the key, a context's CA goes with that context's server only.
  let caFile: string | undefined;
  let caFileSource: string | undefined;
  if (flags.caFile) [caFile, caFileSource] = [flags.caFile, '--ca-file'];
  else if (env.MONCTL_CA_FILE) [caFile, caFileSource] = [env.MONCTL_CA_FILE, 'MONCTL_CA_FILE'];
  else if (ctx?.caFile && normalise(ctx.server) === server) [caFile, caFileSource] = [ctx.caFile, `context ${contextName}: caFile`];
  return {
    server,
    serverSource,
    apiKey,
    credentialSource,
    context: usedContext,
    role: apiKey ? roleOf(apiKey) : undefined,
    caFile,
    caFileSource,
  };
}

/** The `role` claim of an API key JWT, without verifying it (the daemon does that). */
export function roleOf(jwt: string): string | undefined {
  try {
    const payload = JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8')) as { role?: unknown };
    return typeof payload.role === 'string' ? payload.role : undefined;
  } catch {
    return undefined;
  }
}
