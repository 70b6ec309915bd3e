import { spawn } from 'node:child_process';

/**
 * Tries to open a URL in the user's browser: `$BROWSER` (a command, its
 * words split on spaces), else `open` on macOS, `xdg-open` elsewhere. Never
 * fails and never waits: on a server without a browser the URL printed
 * beside it is the way.
 */
export function openBrowser(url: string, env: NodeJS.ProcessEnv = process.env): void {
  const words = env.BROWSER?.trim().split(/\s+/).filter(Boolean);
  const [command, ...args] = words?.length ? words : [process.platform === 'darwin' ? 'open' : 'xdg-open'];
  try {
    const child = spawn(command!, [...args, url], { stdio: 'ignore', detached: true });
    child.on('error', () => undefined);
    child.unref();
  } catch {
    // No browser here: the printed URL is enough.
  }
}
