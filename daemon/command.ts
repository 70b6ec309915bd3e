import { Command, Option } from 'commander';
import { VERSION } from '../src/version.ts';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ExitCode, MonctlError } from '../src/errors.ts';
import type { DaemonConfig } from './config.ts';
import { toDaemonConfig } from './config/daemon-config.ts';
import { ConfigError, loadConfigFile } from './config/file.ts';
import { printConfig } from './config/print.ts';
import { addSettingOptions, resolveSettings } from './config/resolve.ts';
import { SETTINGS, settingOf } from './config/settings.ts';
import { StorageError } from './store/storage-error.ts';
import { integrityCheckAdvice } from './store/storage-log.ts';

const HELP_AFTER = `
Every setting is also an env var (shown above) and a key of the --config file
(the flag in camelCase: --edge-listen is edgeListen). Precedence: flags, then
environment, then config file, then defaults. Durations: 500ms, 15s, 5m, 1h, or a
plain number of milliseconds. adminPassword (env MONCTL_ADMIN_PASSWORD) has no flag.`;

/** Reads --config and the settings of `cmd`; prints problems and exits 2 on a bad configuration. */
function configure(cmd: Command, keys?: string[]) {
  const rows = keys ? SETTINGS.filter((s) => keys.includes(s.key)) : SETTINGS;
  try {
    const path = cmd.opts<{ config?: string }>().config;
    // The whole file is checked even when only some keys are used: it is the daemon's file.
    const file = path ? loadConfigFile(path) : undefined;
    const resolved = resolveSettings(cmd, rows, file);
    for (const notice of resolved.notices) process.stderr.write(`monctl daemon: ${notice}\n`);
    return resolved;
  } catch (err) {
    return usageExit(err);
  }
}

function usageExit(err: unknown): never {
  if (!(err instanceof ConfigError)) throw err;
  for (const problem of err.problems) process.stderr.write(`monctl daemon: ${problem}\n`);
  process.exit(ExitCode.usage);
}

const configOption = () => new Option('--config <file>', 'YAML config file: any of the settings, keys in camelCase').env('MONCTL_CONFIG');

/** `monctl daemon`: settings from flags, `MONCTL_*` env vars and a YAML file (daemon/config/settings.ts). */
export async function runDaemonCommand(argv: string[]): Promise<void> {
  const program = new Command('monctl daemon')
    .description('Run the monctl server: REST, SSE, metrics, probes and the tunnel edge')
    .version(VERSION)
    .enablePositionalOptions()
    .showHelpAfterError()
    .exitOverride((err) => process.exit(err.exitCode === ExitCode.ok ? ExitCode.ok : ExitCode.usage))
    .addOption(configOption())
    .option('--print-config', 'print the effective configuration as YAML (secrets masked), check it, and exit');
  addSettingOptions(program, SETTINGS).addHelpText('after', HELP_AFTER);

  const reset = program
    .command('reset-admin')
    .description("on the daemon's host (daemon running or not): new password for user admin, new key in <data-dir>/admin-api-key")
    .addOption(configOption());
  addSettingOptions(reset, [settingOf('dataDir')!])
    .addHelpText(
      'after',
      '\nThe password comes from MONCTL_ADMIN_PASSWORD (or adminPassword in --config), else a random one is printed once on stderr.',
    )
    .action(() => runResetAdmin(reset));

  const check = program
    .command('check')
    .description('check the database file for damage (PRAGMA integrity_check, read-only; the daemon may run): exit 0 if ok, 1 if not')
    .addOption(configOption());
  addSettingOptions(check, [settingOf('dataDir')!]).action(() => runCheck(check));

  const copy = program
    .command('copy-data')
    .description('copy a SQLite install (daemon stopped) into an empty PostgreSQL database, then compare row counts: exit 0 if they match')
    .addOption(
      new Option('--to <url>', 'the empty PostgreSQL database: postgres://user@host:5432/db')
        .env('MONCTL_DATABASE_URL')
        .makeOptionMandatory(),
    )
    .addOption(configOption());
  addSettingOptions(copy, [settingOf('dataDir')!]);
  copy
    .option('--from <dir>', 'the data dir holding monctl.db (default: --data-dir)')
    .addHelpText('after', '\nThen start every daemon with --database <url>. The SQLite files stay as they were.')
    .action(() => runCopyData(copy));

  const backup = program
    .command('backup <file>')
    .description('copy the SQLite database while the daemon runs (online backup, checked); the install secret goes to FILE.key')
    .option('--with-secrets', 'keep the install secret inside the backup (no FILE.key): whoever reads it can open every stored secret')
    .addOption(configOption());
  addSettingOptions(backup, [settingOf('dataDir')!, settingOf('database')!]).action((file: string) => runBackupCommand(backup, file));

  const restore = program
    .command('restore <file>')
    .description('replace the database with a backup (daemon stopped); the current one is kept as monctl.db.before-restore-<time>')
    .addOption(configOption());
  addSettingOptions(restore, [settingOf('dataDir')!, settingOf('database')!]).action((file: string) => runRestoreCommand(restore, file));

  program.action(() => runDaemon(program));
  await program.parseAsync(argv, { from: 'user' });
}

async function runResetAdmin(cmd: Command): Promise<void> {
  const settings = configure(cmd, ['dataDir', 'adminPassword']);
  const dataDir = settings.values.get('dataDir') as string;
  const { resetAdmin } = await import('./auth/reset-admin.ts');
  try {
    const done = await resetAdmin(dataDir, settings.values.get('adminPassword') as string | undefined);
    const say = (line: string) => process.stderr.write(`monctl daemon reset-admin: ${line}\n`);
    say(
      `${done.user} user "admin" (role ADMIN)${done.generated ? ` with password ${done.generated} (shown once)` : ' with the given password'}; its sessions are ended and its second factor is reset`,
    );
    if (done.revokedKeyId !== undefined) say(`revoked API key ${done.revokedKeyId}, the previous one in ${done.keyFile}`);
    say(`wrote new ADMIN API key ${done.keyId} to ${done.keyFile}`);
  } catch (err) {
    process.stderr.write(`monctl daemon reset-admin: ${(err as Error).message}\n`);
    process.exit(err instanceof MonctlError ? err.exitCode : ExitCode.error);
  }
}

async function runCheck(cmd: Command): Promise<void> {
  const dataDir = configure(cmd, ['dataDir']).values.get('dataDir') as string;
  const file = join(dataDir, 'monctl.db');
  if (!existsSync(file)) {
    process.stderr.write(`monctl daemon check: no database at ${file}\n`);
    process.exit(ExitCode.notFound);
  }
  const { checkSqliteFile } = await import('./store/dialect/sqlite.ts');
  let problems: string[];
  try {
    problems = checkSqliteFile(file);
  } catch (err) {
    problems = [(err as Error).message];
  }
  if (problems.length === 1 && problems[0] === 'ok') {
    process.stdout.write(`${file}: ok\n`);
    return;
  }
  process.stdout.write(`${problems.map((p) => `${file}: ${p}`).join('\n')}\n`);
  process.stderr.write(`monctl daemon check: ${file} is damaged: restore it from a backup (with the daemon stopped)\n`);
  process.exit(ExitCode.error);
}

async function runCopyData(cmd: Command): Promise<void> {
  const dataDir = configure(cmd, ['dataDir']).values.get('dataDir') as string;
  const opts = cmd.opts<{ from?: string; to: string }>();
  const say = (line: string) => process.stderr.write(`monctl daemon copy-data: ${line}\n`);
  let url: string;
  try {
    url = (await import('./config/types.ts')).databaseUrl.parse(opts.to, true);
  } catch (err) {
    say(`--to: ${(err as Error).message}`);
    process.exit(ExitCode.usage);
  }
  const { copyData, CopyRefused } = await import('./store/copy-data.ts');
  const { DataDirLockedError } = await import('./store/dialect/sqlite-lock.ts');
  try {
    const outcome = await copyData(opts.from ?? dataDir, url, say);
    const width = Math.max(...outcome.tables.map((t) => t.table.length));
    process.stdout.write(`${'table'.padEnd(width)}  sqlite  postgres\n`);
    for (const t of outcome.tables) {
      process.stdout.write(
        `${t.table.padEnd(width)}  ${String(t.source).padStart(6)}  ${String(t.target).padStart(8)}${t.source === t.target ? '' : '  DIFFERS'}\n`,
      );
    }
    if (outcome.mismatched.length > 0) {
      say(`row counts differ in ${outcome.mismatched.join(', ')}`);
      process.exit(ExitCode.error);
    }
    say(
      `copied ${outcome.tables.reduce((n, t) => n + t.target, 0)} rows in ${outcome.tables.length} tables to ${outcome.target}; counts match`,
    );
  } catch (err) {
    const known = err instanceof CopyRefused || err instanceof DataDirLockedError;
    say(known ? (err as Error).message : `failed, nothing was copied: ${(err as Error).message}`);
    process.exit(err instanceof CopyRefused && /no SQLite database/.test((err as Error).message) ? ExitCode.notFound : ExitCode.error);
  }
}

async function runBackupCommand(cmd: Command, file: string): Promise<void> {
  const settings = configure(cmd, ['dataDir', 'database']).values;
  const { runBackup } = await import('./backup/commands.ts');
  const say = (line: string) => process.stderr.write(`monctl daemon backup: ${line}\n`);
  const withSecrets = cmd.opts<{ withSecrets?: boolean }>().withSecrets === true;
  process.exitCode = await runBackup(
    settings.get('dataDir') as string,
    settings.get('database') as string | undefined,
    file,
    withSecrets,
    say,
  );
}

async function runRestoreCommand(cmd: Command, file: string): Promise<void> {
  const settings = configure(cmd, ['dataDir', 'database']).values;
  const { runRestore } = await import('./backup/commands.ts');
  const say = (line: string) => process.stderr.write(`monctl daemon restore: ${line}\n`);
  process.exitCode = await runRestore(settings.get('dataDir') as string, settings.get('database') as string | undefined, file, say);
}

async function runDaemon(program: Command): Promise<void> {
  const settings = configure(program);
  let config: DaemonConfig;
  try {
    // Also for --print-config, which then doubles as a check of the configuration.
    config = toDaemonConfig(settings);
  } catch (err) {
    usageExit(err);
  }
  if (program.opts<{ printConfig?: boolean }>().printConfig) {
    process.stdout.write(printConfig(SETTINGS, settings));
    return;
  }

  const { startDaemon } = await import('./daemon.ts');
  let daemon;
  try {
    daemon = await startDaemon(config);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const corrupt = e instanceof StorageError ? e : e.cause instanceof StorageError ? e.cause : undefined;
    const hint =
      e.code === 'EADDRINUSE'
        ? ' (is another daemon running? choose another --listen port)'
        : corrupt?.kind === 'corrupt'
          ? `; the database file is corrupt: ${integrityCheckAdvice(config.dataDir)}`
          : '';
    process.stderr.write(`monctl daemon: ${e.message}${hint}\n`);
    process.exit(ExitCode.error);
  }

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) process.exit(ExitCode.error); // a second signal means now
    stopping = true;
    daemon.ctx.log.info({ signal }, 'shutting down');
    daemon.stop().then(
      () => process.exit(ExitCode.ok),
      (err) => {
        daemon.ctx.log.error({ err }, 'shutdown failed');
        process.exit(ExitCode.error);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGHUP', () => daemon.reload('SIGHUP'));
  process.on('unhandledRejection', (err) => daemon.ctx.log.error({ err }, 'unhandled rejection'));
}
