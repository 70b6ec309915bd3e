import { ExitCode, HttpError, MonctlError } from '../src/errors.ts';

/** Nothing answered: no daemon there, or not there (not a TLS or certificate failure, which say why). */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'EADDRNOTAVAIL']);
const UNREACHABLE_HINT =
  'hint: is the daemon running, and listening there? For a daemon started with --listen, --data-dir or --config, ' +
  'tell monctl the same: --server URL or MONCTL_SERVER (where it listens), MONCTL_DATA_DIR (its data dir, for the admin key), ' +
  'or MONCTL_CONFIG (its config file: listen and dataDir); monctl info shows what was used';

/**
 * The one place that turns an error into stderr text and an exit code
 * (docs/API.md#exit-codes-of-the-cli): the problem detail, then each field error the
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
      if (err.status === 401) {
        lines.push(
          'hint: the credential is missing, expired or revoked: see monctl info, monctl login' +
            " (on the daemon's host, MONCTL_DATA_DIR or MONCTL_CONFIG finds the admin key of a daemon started with --data-dir or --config)",
        );
      }
    }
    const cause = err.cause as NodeJS.ErrnoException | undefined;
    if (err.code === 'connection' && UNREACHABLE.has(cause?.code ?? cause?.message ?? '')) lines.push(UNREACHABLE_HINT);
    process.stderr.write(`${lines.join('\n')}\n`);
    return err.exitCode;
  }
  process.stderr.write(`error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  return ExitCode.error;
}
