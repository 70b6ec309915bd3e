import { Command, Option } from 'commander';
import { defaultDataDir } from '../src/config/paths.ts';
import { VERSION } from '../src/version.ts';
import { type DaemonConfig, parseHostPort } from './config.ts';
import { probeConfigFromEnv } from './probes/config.ts';
import { startDaemon } from './daemon.ts';
import { tlsFiles } from './http/tls.ts';

/** `monctl daemon`: flags, each also `MONCTL_<NAME>` (CONTRACT section 1). */
export async function runDaemonCommand(argv: string[]): Promise<void> {
  const program = new Command('monctl daemon')
    .description('Run the monctl server: REST, SSE, metrics, probes and the tunnel edge')
    .version(VERSION)
    .addOption(new Option('--listen <host:port>', 'REST, SSE, login, explorer, metrics, agent tunnel').env('MONCTL_LISTEN').default('0.0.0.0:8080'))
    .addOption(new Option('--edge-listen <host:port>', 'public entry for HTTP routes').env('MONCTL_EDGE_LISTEN').default('0.0.0.0:8081'))
    .addOption(new Option('--data-dir <dir>', 'SQLite database, secrets, bootstrap key').env('MONCTL_DATA_DIR').default(defaultDataDir()))
    .addOption(new Option('--log-level <level>', 'log level').env('MONCTL_LOG_LEVEL').default('info')
      .choices(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']))
    .addOption(new Option('--tls-cert <file>', 'PEM certificate (chain) for HTTPS on --listen; reloaded on SIGHUP and on change').env('MONCTL_TLS_CERT'))
    .addOption(new Option('--tls-key <file>', 'PEM private key of --tls-cert').env('MONCTL_TLS_KEY'))
    .showHelpAfterError()
    .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2));
  program.parse(argv, { from: 'user' });
  const opts = program.opts<{ listen: string; edgeListen: string; dataDir: string; logLevel: string; tlsCert?: string; tlsKey?: string }>();

  let config: DaemonConfig;
  try {
    config = {
      listen: parseHostPort(opts.listen, '--listen'),
      edgeListen: parseHostPort(opts.edgeListen, '--edge-listen'),
      dataDir: opts.dataDir,
      logLevel: opts.logLevel,
      sseHeartbeatMs: Number(process.env.MONCTL_SSE_HEARTBEAT_MS) || 15_000,
      checkResponses: process.env.MONCTL_CHECK_RESPONSES === '1',
      probes: probeConfigFromEnv(),
      tls: tlsFiles(opts.tlsCert, opts.tlsKey),
    };
  } catch (err) {
    process.stderr.write(`monctl daemon: ${(err as Error).message}\n`);
    process.exit(2);
  }

  let daemon;
  try {
    daemon = await startDaemon(config);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const hint = e.code === 'EADDRINUSE' ? ' (is another daemon running? choose another --listen port)' : '';
    process.stderr.write(`monctl daemon: ${e.message}${hint}\n`);
    process.exit(1);
  }

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) process.exit(1); // a second signal means now
    stopping = true;
    daemon.ctx.log.info({ signal }, 'shutting down');
    daemon.stop().then(() => process.exit(0), (err) => {
      daemon.ctx.log.error({ err }, 'shutdown failed');
      process.exit(1);
    });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGHUP', () => daemon.reload('SIGHUP'));
  process.on('unhandledRejection', (err) => daemon.ctx.log.error({ err }, 'unhandled rejection'));
}
