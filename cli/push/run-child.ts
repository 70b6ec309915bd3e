import type { ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import type { TailBuffer } from './tail-buffer.ts';

/**
 * Runs the command of `monctl run` as shells do: stdin inherited, stdout and stderr passed
 * through (and their tail kept for the finish ping), SIGINT, SIGTERM and SIGHUP forwarded, and
 * its exit code as a shell reports it: 128 + n when a signal killed it, 127 when the command
 * is not found, 126 when it cannot be executed.
 */
const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
/** After the command exits, how long its output may still drain (a background child can hold the pipes open for ever). */
const DRAIN_MS = 1000;

export function runChild(command: string, args: string[], tail: TailBuffer): Promise<number> {
  const { spawn } = process.getBuiltinModule('node:child_process');
  const { constants } = process.getBuiltinModule('node:os');
  return new Promise((resolve) => {
    let settled = false;
    let drain: NodeJS.Timeout | undefined;
    const child: ChildProcess = spawn(command, args, { stdio: ['inherit', 'pipe', 'pipe'] });
    let exitCode: number | undefined;
    const stopDraining = () => {
      child.stdout?.destroy();
      child.stderr?.destroy();
      finish(exitCode!);
    };
    // Once the command has exited, a signal ends the wait for its output (nothing is left to forward it to).
    const forward = (signal: NodeJS.Signals) => (exitCode === undefined ? child.kill(signal) : stopDraining());
    for (const signal of FORWARDED) process.on(signal, forward);
    const finish = (code: number) => {
      if (settled) return;
      settled = true;
      clearTimeout(drain);
      for (const signal of FORWARDED) process.off(signal, forward);
      resolve(code);
    };
    // Pass through with back-pressure (a slow reader of monctl's output slows the command, as a pipe would), and keep the tail.
    const tee = (from: Readable | null, to: NodeJS.WriteStream) => {
      if (!from) return;
      from.on('data', (chunk: Buffer) => tail.push(chunk));
      from.pipe(to, { end: false });
    };
    // A reader that went away (EPIPE) must not kill monctl before the finish ping.
    process.stdout.on('error', () => {});
    process.stderr.on('error', () => {});
    tee(child.stdout, process.stdout);
    tee(child.stderr, process.stderr);
    child.on('error', (err: NodeJS.ErrnoException) => {
      const code = err.code === 'ENOENT' ? 127 : 126;
      const message = `monctl run: ${command}: ${code === 127 ? 'command not found' : (err.code ?? err.message)}\n`;
      tail.push(Buffer.from(message));
      process.stderr.write(message);
      finish(code);
    });
    child.on('exit', (code, signal) => {
      exitCode = code ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0);
      drain = setTimeout(stopDraining, DRAIN_MS);
    });
    child.on('close', () => {
      if (exitCode !== undefined) finish(exitCode);
    });
  });
}
