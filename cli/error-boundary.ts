import { ExitCode, HttpError, MonctlError } from '../src/errors.ts';

/**
 * The one place that turns an error into stderr text and an exit code
 * (CONTRACT section 7): the problem detail, then each field error the
 * detail does not already say as `  field: message` (the daemon's details
 * often quote them: "Invalid request body: password: …"); commander's usage errors are 2 (commander has already
 * printed them), help and version are 0.
 */
export function reportError(err: unknown): number {
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && code.startsWith('commander.')) {
    if (code === 'commander.helpDisplayed' || code === 'commander.version' || code === 'commander.help') return ExitCode.ok;
    return ExitCode.usage;
  }
  if (err instanceof MonctlError) {
    const lines = [`error: ${err.message}`];
    if (err instanceof HttpError) {
      for (const e of err.errors ?? []) {
        const line = `${e.field}: ${e.message}`;
        if (e.message !== err.message && !err.message.includes(line)) lines.push(`  ${line}`);
      }
      if (err.status === 401) lines.push('hint: the credential is missing, expired or revoked: see monctl info, monctl login');
    }
    process.stderr.write(`${lines.join('\n')}\n`);
    return err.exitCode;
  }
  process.stderr.write(`error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  return ExitCode.error;
}
