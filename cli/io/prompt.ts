import { ExitCode, MonctlError } from '../../src/errors.ts';

/**
 * Questions to a person on a terminal; scripts feed stdin instead. Secrets
 * (passwords, API keys) come from here, never from a flag value, so they stay
 * out of shell history and `ps`.
 */
export const stdinIsTty = () => Boolean(process.stdin.isTTY);

/** Everything on stdin, as text. */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function ask(question: string, hidden: boolean): Promise<string> {
  const { createInterface } = await import('node:readline');
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  if (hidden) {
    // Echo nothing while the secret is typed.
    (rl as unknown as { _writeToOutput: (s: string) => void })._writeToOutput = (s: string) => {
      if (s.startsWith(question)) process.stderr.write(question);
    };
  }
  try {
    return await new Promise<string>((resolve) => rl.question(question, resolve));
  } finally {
    if (hidden) process.stderr.write('\n');
    rl.close();
  }
}

const stdinLines = { lines: [] as string[], partial: '', ended: false, listening: false, wake: () => {} };

/**
 * The next line of stdin, as soon as it arrives: a script answers each question with a line, and
 * may compute a later answer from what the command printed (the code of a secret it shows).
 * Between questions stdin is paused, so that an open pipe does not keep the process alive.
 */
async function nextStdinLine(): Promise<string> {
  const s = stdinLines;
  if (!s.listening) {
    s.listening = true;
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (chunk: string) => {
      const parts = (s.partial + chunk).split(/\r?\n/);
      s.partial = parts.pop() ?? '';
      s.lines.push(...parts);
      if (s.lines.length) {
        process.stdin.pause();
        (process.stdin as { unref?: () => void }).unref?.();
        s.wake();
      }
    });
    process.stdin.on('end', () => {
      if (s.partial) s.lines.push(s.partial);
      [s.partial, s.ended] = ['', true];
      s.wake();
    });
  }
  while (s.lines.length === 0 && !s.ended) {
    const arrived = new Promise<void>((resolve) => (s.wake = resolve));
    (process.stdin as { ref?: () => void }).ref?.();
    process.stdin.resume();
    await arrived;
  }
  return s.lines.shift() ?? '';
}

/**
 * A secret from a hidden prompt on a TTY, else the next line of stdin (the first, for a
 * command that asks one; a password then an authentication code, for a login that asks two).
 */
export async function readSecret(label: string, opts: { confirm?: boolean } = {}): Promise<string> {
  if (!stdinIsTty()) {
    const value = await nextStdinLine();
    if (!value) throw new MonctlError('usage', `${label} expected on stdin`, ExitCode.usage);
    return value;
  }
  const value = await ask(`${label}: `, true);
  if (opts.confirm && (await ask(`Repeat ${label.toLowerCase()}: `, true)) !== value) {
    throw new MonctlError('usage', `the two ${label.toLowerCase()} entries differ`, ExitCode.usage);
  }
  if (!value) throw new MonctlError('usage', `${label} must not be empty`, ExitCode.usage);
  return value;
}

/** Reads the secrets named by `labels`: hidden prompts on a terminal, else one stdin line each. */
export async function readSecrets(labels: string[]): Promise<string[]> {
  if (labels.length === 0) return [];
  if (stdinIsTty()) {
    const values: string[] = [];
    for (const label of labels) values.push(await readSecret(label));
    return values;
  }
  const lines = (await readStdin()).split(/\r?\n/);
  return labels.map((label, i) => {
    if (!lines[i])
      throw new MonctlError(
        'usage',
        `expected ${labels.length === 1 ? 'a line' : `${labels.length} lines`} on stdin (${labels.join('; ')}): ${label} is missing`,
        ExitCode.usage,
      );
    return lines[i];
  });
}

/**
 * Destructive commands: asks on a TTY, needs `--yes` otherwise (exit 2).
 * `what` completes "Delete resource 3 (web)?"; `items`, when given, are
 * listed (one per line) before the question and in the refusal, so that
 * the person or the script log sees what would go.
 */
export async function confirm(what: string, yes: boolean | undefined, items: string[] = []): Promise<void> {
  if (yes) return;
  const list = items.map((i) => `\n  ${i}`).join('');
  if (!stdinIsTty()) {
    throw new MonctlError(
      'usage',
      `refusing to ${what.charAt(0).toLowerCase()}${what.slice(1)} without --yes (stdin is not a terminal)${list && `:${list}`}`,
      ExitCode.usage,
    );
  }
  if (list) process.stderr.write(`${list.slice(1)}\n`);
  const answer = await ask(`${what}? [y/N] `, false);
  if (!/^y(es)?$/i.test(answer.trim())) throw new MonctlError('aborted', 'aborted', ExitCode.error);
}
