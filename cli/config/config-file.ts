import { join } from 'node:path';
import { defaultConfigDir } from '../../src/config/paths.ts';
import { MonctlError } from '../../src/errors.ts';

// node:fs through getBuiltinModule: its ESM facade costs every cold start ~6 ms of CPU.
const { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } = process.getBuiltinModule('node:fs');

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

/** Writes atomically, directory 0700 and file 0600: it holds API keys. */
export function writeConfig(config: ConfigFile, env = process.env): void {
  const dir = configDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const path = configPath(env);
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}
