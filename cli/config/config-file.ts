import { type ConfigFile, configDir, configPath } from './connection.ts';

// Reading the config lives in connection.ts: every command reads it, and one module less
// on the cold start of each; writing it (login, logout, context) lives here.
export { CONFIG_NAME, type ConfigFile, type Context, configDir, configPath, readConfig } from './connection.ts';

// node:fs through getBuiltinModule: its ESM facade costs every cold start ~6 ms of CPU.
const { chmodSync, mkdirSync, renameSync, writeFileSync } = process.getBuiltinModule('node:fs');

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
