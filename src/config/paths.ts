import { homedir } from 'node:os';
import { join } from 'node:path';

/** `$XDG_DATA_HOME/monctl`, else `~/.local/share/monctl` (XDG base directories; README.md#configuration). */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_DATA_HOME || join(homedir(), '.local', 'share');
  return join(base, 'monctl');
}

/** `$MONCTL_CONFIG_DIR`, else `$XDG_CONFIG_HOME/monctl`, else `~/.config/monctl` (XDG base directories). */
export function defaultConfigDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.MONCTL_CONFIG_DIR) return env.MONCTL_CONFIG_DIR;
  const base = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(base, 'monctl');
}

export const ADMIN_KEY_FILE = 'admin-api-key';
export const DEFAULT_SERVER = 'http://127.0.0.1:8080';
