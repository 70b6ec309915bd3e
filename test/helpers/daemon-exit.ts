import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ADMIN_PASSWORD, ROOT } from './daemon.ts';

/** Runs `bin/monctl daemon` on `dataDir` to its end, for starts that must be refused (killed after 20 s if it runs). */
export function runDaemonToExit(dataDir: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      join(ROOT, 'bin/monctl'),
      ['daemon', '--listen', '127.0.0.1:0', '--edge-listen', '127.0.0.1:0', '--data-dir', dataDir],
      {
        env: { ...process.env, MONCTL_ADMIN_PASSWORD: ADMIN_PASSWORD },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}
