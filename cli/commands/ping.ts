import type { Command } from 'commander';
import { MAX_PING_BODY_BYTES } from '../../src/api/kinds.ts';
import { ExitCode, MonctlError, usage } from '../../src/errors.ts';
import { type PingSuffix, pingUrlOf, sendPing } from '../push/ping-client.ts';
import { act } from '../runtime.ts';

/**
 * `monctl ping NAME|UUID [--start|--fail|--exit-code N|--log] [--body @file|-|text]`: one ping
 * of a push check (docs/API.md#push-checks), as curl would send it. A UUID (or the whole ping
 * URL) needs no credential; a name is looked up through the admin API.
 */
interface PingFlags {
  start?: boolean;
  fail?: boolean;
  exitCode?: string;
  log?: boolean;
  body?: string;
}

/** The URL's last segment for the flags given (at most one of them). */
export function suffixOf(f: PingFlags): PingSuffix {
  const given = [f.start && '--start', f.fail && '--fail', f.exitCode !== undefined && '--exit-code', f.log && '--log'].filter(Boolean);
  if (given.length > 1) usage(`give one of --start, --fail, --exit-code and --log, not ${given.join(' and ')}`);
  if (f.exitCode !== undefined) {
    if (!/^\d{1,3}$/.test(f.exitCode) || Number(f.exitCode) > 255) usage(`--exit-code must be a number from 0 to 255, not "${f.exitCode}"`);
    return `${Number(f.exitCode)}`;
  }
  return f.start ? 'start' : f.fail ? 'fail' : f.log ? 'log' : '';
}

/** Reads at most `limit` bytes of a file (the daemon keeps 100 KiB; one byte more tells it the rest was cut). */
function readHead(path: string, limit: number): Buffer {
  const fs = process.getBuiltinModule('node:fs');
  let fd: number;
  try {
    fd = fs.openSync(path, 'r');
  } catch (err) {
    usage(`--body: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  try {
    const buf = Buffer.alloc(limit);
    let n = 0;
    for (let r = 1; r > 0 && n < limit; n += r) r = fs.readSync(fd, buf, n, limit - n, null);
    return buf.subarray(0, n);
  } finally {
    fs.closeSync(fd);
  }
}

/** The first `limit` bytes of stdin; the rest is read and dropped (a writer blocked on a full pipe would never end). */
async function stdinHead(limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    if (size >= limit) continue;
    chunks.push(chunk.subarray(0, limit - size));
    size += Math.min(chunk.length, limit - size);
  }
  return Buffer.concat(chunks);
}

/** `@file`, `-` (stdin) or the text itself. */
async function bodyOf(text: string | undefined): Promise<Buffer | undefined> {
  const limit = MAX_PING_BODY_BYTES + 1;
  if (text === undefined) return undefined;
  if (text === '-') return stdinHead(limit);
  if (text.startsWith('@')) return readHead(text.slice(1), limit);
  return Buffer.from(text, 'utf8').subarray(0, limit);
}

export function register(program: Command): void {
  program
    .command('ping')
    .description('ping a push check: success, or --start, --fail, --exit-code N, --log (a UUID needs no credential)')
    .argument('<check>', 'the push check: its UUID or ping URL, or its name or id (looked up with your credential)')
    .option('--start', 'a run began')
    .option('--fail', 'the run failed (FAILED_RUN)')
    .option('--exit-code <n>', 'the run ended with this exit code (0 to 255): 0 is success, anything else a failure')
    .option('--log', 'record the body in the history; change nothing')
    .option('--body <@file|-|text>', 'send a body (kept up to 100 KiB): @path reads a file, - reads stdin')
    .addHelpText('after', '\nExit codes: 0 recorded, 3 no such push check (404), 1 refused or rate-limited (429: says when to retry).')
    .action(
      act(async (rt, ref: string, f: PingFlags) => {
        const suffix = suffixOf(f);
        const body = await bodyOf(f.body);
        const url = await pingUrlOf(rt, ref);
        try {
          await sendPing(url, suffix, body);
        } catch (err) {
          if (err instanceof MonctlError && err.exitCode === ExitCode.notFound)
            throw new MonctlError('not-found', `no push check has the ping URL ${url} (404)`, ExitCode.notFound);
          throw err;
        }
        // Quiet in a crontab (cron mails any output); a person at a terminal sees it worked.
        if (process.stderr.isTTY)
          rt.info(`Ping recorded (${suffix === '' ? 'success' : /^\d+$/.test(suffix) ? `exit code ${suffix}` : suffix}).`);
      }),
    );
}
