import type { Command } from 'commander';
import { MonctlError } from '../../src/errors.ts';
import { type PingSuffix, pingUrlOf, sendPing } from '../push/ping-client.ts';
import { runChild } from '../push/run-child.ts';
import { TailBuffer } from '../push/tail-buffer.ts';
import { act, type Runtime } from '../runtime.ts';

/**
 * `monctl run NAME|UUID -- command args…`, in the spirit of runitor and `hc`: pings start, runs
 * the command (stdin, stdout and stderr passed through), then pings its exit code with the last
 * 10 KiB of its output, and exits with the command's own code. monctl being unreachable never
 * stops the command nor changes its exit code: each ping is retried briefly and a failure is
 * only reported on stderr (docs/DECISIONS.md, Push checks: the CLI).
 */
export const TAIL_BYTES = 10 * 1024;
/** Each ping: 3 tries within 5 s, so that a daemon that is down delays a job's end by 5 s at most. */
const RETRY = { tries: 3, budgetMs: 5000 };

function report(what: string, err: unknown): void {
  const message = err instanceof MonctlError ? err.message : String(err);
  process.stderr.write(`monctl run: could not ${what}: ${message}\n`);
}

/** The ping URL, a connection failure retried as a ping is (a name needs the admin API, which may be down). */
async function lookUp(rt: Runtime, ref: string): Promise<string> {
  const deadline = Date.now() + RETRY.budgetMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await pingUrlOf(rt, ref);
    } catch (err) {
      const pause = attempt * 500;
      const retry = err instanceof MonctlError && err.code === 'connection' && attempt < RETRY.tries && Date.now() + pause < deadline;
      if (!retry) throw err;
      await new Promise((r) => setTimeout(r, pause));
    }
  }
}

async function run(rt: Runtime, ref: string, argv: string[]): Promise<void> {
  // Looked up while the command starts.
  const url = lookUp(rt, ref).catch((err: unknown) => {
    report(`find the ping URL of ${ref}`, err);
    return undefined;
  });
  const ping = async (suffix: PingSuffix, body?: Buffer) => {
    const target = await url;
    if (target) await sendPing(target, suffix, body, RETRY).catch((err: unknown) => report(`ping ${suffix || 'success'}`, err));
  };
  // The start ping runs beside the command (a daemon that is down must not delay it), and is sent before the finish.
  const started = ping('start');
  const tail = new TailBuffer(TAIL_BYTES);
  const code = await runChild(argv[0], argv.slice(1), tail);
  await started;
  await ping(`${code}`, tail.bytes());
  process.exitCode = code;
}

export function register(program: Command): void {
  program
    .command('run')
    .description('run a command and ping a push check: start, then its exit code with the last 10 KiB of its output')
    .argument('<check>', 'the push check: its UUID or ping URL (no credential needed), or its name or id')
    .argument('<command...>', 'the command and its arguments, after --')
    .usage('<check> -- <command> [args...]')
    .addHelpText(
      'after',
      "\nExits with the command's own code (128+n when signal n killed it, 127 when it is not found).\n" +
        'SIGINT, SIGTERM and SIGHUP are passed to the command. When monctl cannot be reached the command\n' +
        'still runs: each ping is tried 3 times within 5 s and a failure is reported on stderr.\n\n' +
        'Example (crontab): 0 3 * * * monctl run nightly-backup -- /usr/local/bin/backup.sh',
    )
    .action(act(run));
}
