import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from '../helpers/daemon.ts';
import type { RunResult } from '../cli/run.ts';

/** A running `monctl` whose stderr can be waited on as it streams (a login that prints a URL, then waits). */
export interface LiveMonctl {
  /** Resolves with the first match of `pattern` in stderr so far or to come; rejects if monctl exits first. */
  stderrMatch(pattern: RegExp): Promise<RegExpExecArray>;
  done: Promise<RunResult>;
  kill(): void;
}

/** Runs `bin/monctl` as runMonctl does (MONCTL_* and XDG_* scrubbed), exposing stderr live. */
export function spawnMonctl(args: string[], env: Record<string, string>): LiveMonctl {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !/^(MONCTL_|XDG_|NO_COLOR)/.test(k)) base[k] = v;
  const child = spawn(join(ROOT, 'bin/monctl'), args, { env: { ...base, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const waiters = new Set<() => void>();
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => {
    stderr += c;
    for (const wake of waiters) wake();
  });
  child.stdin.end('');
  const done = new Promise<RunResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      for (const wake of waiters) wake();
      resolve({ code, stdout, stderr, json: () => JSON.parse(stdout) });
    });
  });
  return {
    done,
    kill: () => child.kill('SIGKILL'),
    stderrMatch(pattern) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = pattern.exec(stderr);
          if (m) {
            waiters.delete(check);
            resolve(m);
          } else if (child.exitCode !== null || child.signalCode !== null) {
            waiters.delete(check);
            reject(new Error(`monctl exited (${child.exitCode ?? child.signalCode}) before printing ${pattern}:\n${stderr}`));
          }
        };
        waiters.add(check);
        check();
      });
    },
  };
}
