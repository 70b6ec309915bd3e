import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { type Command, Option } from 'commander';
import pino from 'pino';
import { ExitCode } from '../../src/errors.ts';
import { defaultLogFormat, LOG_FORMATS, type LogFormat, logDestination } from '../../src/log-format.ts';
import { readCaFile } from '../../src/tls/ca-file.ts';
import { PROBE_PROTOCOL } from '../../src/tunnel/probe-protocol.ts';
import { rejectedMessage, TunnelAgent } from './agent.ts';

interface AgentFlags {
  server?: string;
  tokenFile?: string;
  skipTls?: boolean;
  caFile?: string;
  targetTimeout: string;
  logLevel: string;
  logFormat: LogFormat;
  maxAuthFailures: string;
  probeConcurrency: string;
  probeProtocol: string;
}

/** Asks for the token on the terminal without echoing it. node:readline is loaded here only: an agent that never prompts does without it. */
async function promptToken(): Promise<string> {
  const { createInterface } = process.getBuiltinModule('node:readline');
  const muted = new Writable({ write: (_c, _e, done) => done() });
  process.stderr.write('Registration token: ');
  const rl = createInterface({ input: process.stdin, output: muted, terminal: true });
  const token = await new Promise<string>((resolve) => rl.once('line', resolve));
  rl.close();
  process.stderr.write('\n');
  return token.trim();
}

/** The token source, in order: --token-file, MONCTL_AGENT_TOKEN, a prompt on a TTY. */
async function tokenSource(flags: AgentFlags): Promise<() => string> {
  if (flags.tokenFile) {
    const file = flags.tokenFile;
    const read = () => readFileSync(file, 'utf8').trim();
    read(); // fail now, with a clear message, if it is unreadable
    return () => {
      try {
        return read();
      } catch {
        return '';
      }
    };
  }
  const env = process.env.MONCTL_AGENT_TOKEN?.trim();
  if (env) return () => env;
  if (process.stdin.isTTY) {
    const typed = await promptToken();
    return () => typed;
  }
  throw new Error('no registration token: use --token-file, MONCTL_AGENT_TOKEN, or run on a terminal to be prompted');
}

/** `monctl agent`: runs the tunnel agent in the foreground (logs on stdout: JSON, or pretty on a terminal). */
export function registerAgentCommand(program: Command): void {
  configureAgentCommand(program.command('agent'));
}

/** The agent's options and action on `cmd`: `monctl agent`, or the root of the standalone agent (cli/agent/main.ts). */
export function configureAgentCommand(cmd: Command): Command {
  return (
    cmd
      .description('run the tunnel agent: dial the daemon and serve the routes bound to this agent')
      .addOption(new Option('--server <url>', 'daemon API URL (its main listener)').env('MONCTL_SERVER'))
      .option('--token-file <path>', 'file holding the registration token (else MONCTL_AGENT_TOKEN, else a prompt)')
      .option('--skip-tls', 'do not verify TLS certificates of https targets')
      .addOption(
        new Option('--ca-file <file>', 'PEM CA certificate(s) to trust for an https:// --server, besides the default roots').env(
          'MONCTL_CA_FILE',
        ),
      )
      .addOption(new Option('--target-timeout <seconds>', 'connect and response-header timeout towards targets (504 beyond)').default('30'))
      .addOption(
        new Option('--log-level <level>', 'log level')
          .env('MONCTL_LOG_LEVEL')
          .default('info')
          .choices(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']),
      )
      .addOption(
        new Option('--log-format <format>', 'json, or pretty for people')
          .env('MONCTL_LOG_FORMAT')
          .choices(LOG_FORMATS)
          .default(defaultLogFormat()),
      )
      .addOption(new Option('--max-auth-failures <n>', 'exit 4 after this many token refusals (401) in a row').default('10'))
      .addOption(
        new Option('--probe-concurrency <n>', 'checks run at once for resources located at this agent')
          .env('MONCTL_AGENT_PROBE_CONCURRENCY')
          .default('64'),
      )
      // Tests: 0 makes the agent act as one from before remote checks (it announces none and refuses probe streams).
      .addOption(new Option('--probe-protocol <n>', 'probe protocol to announce').default(String(PROBE_PROTOCOL)).hideHelp())
      .action(async (_local: AgentFlags, command: Command) => {
        // `--server` is also a global option of `monctl`, which may have consumed it.
        const flags = command.optsWithGlobals<AgentFlags>();
        const usage = (message: string) => {
          process.stderr.write(`monctl agent: ${message}\n`);
          process.exit(ExitCode.usage);
        };
        if (!flags.server) return usage('--server is required (or MONCTL_SERVER)');
        try {
          if (!/^https?:$/.test(new URL(flags.server).protocol)) throw new Error();
        } catch {
          return usage(`--server must be an http(s) URL, got ${flags.server}`);
        }
        if (flags.caFile) {
          try {
            readCaFile(flags.caFile);
          } catch (err) {
            return usage((err as Error).message);
          }
        }
        const timeout = Number(flags.targetTimeout);
        if (!(timeout > 0)) return usage('--target-timeout must be a positive number of seconds');
        const maxAuthFailures = Number(flags.maxAuthFailures);
        if (!Number.isInteger(maxAuthFailures) || maxAuthFailures < 1)
          return usage('--max-auth-failures must be a whole number of 1 or more');
        // With its queue (4 per slot), at most 5,000 probe streams: half of what the agent's mux session accepts.
        const probeConcurrency = Number(flags.probeConcurrency);
        if (!Number.isInteger(probeConcurrency) || probeConcurrency < 1 || probeConcurrency > 1_000)
          return usage('--probe-concurrency must be a whole number from 1 to 1000');
        const probeProtocol = Number(flags.probeProtocol);
        if (!Number.isInteger(probeProtocol) || probeProtocol < 0) return usage('--probe-protocol must be a whole number of 0 or more');
        let token: () => string;
        try {
          token = await tokenSource(flags);
        } catch (err) {
          return usage((err as Error).message);
        }

        const logOptions = {
          level: flags.logLevel,
          base: { pid: process.pid, component: 'agent' },
          timestamp: pino.stdTimeFunctions.isoTime,
        };
        // JSON straight to fd 1, as pino does by default, without creating process.stdout (a stream the agent never uses).
        const log = pino(logOptions, (await logDestination(flags.logFormat)) ?? pino.destination(1));
        const agent = new TunnelAgent({
          server: flags.server,
          token,
          skipTls: Boolean(flags.skipTls),
          targetTimeoutMs: timeout * 1000,
          log,
          caFile: flags.caFile,
          maxAuthFailures,
          probeConcurrency,
          probeProtocol,
        });
        let stopping = false;
        const shutdown = (signal: string) => {
          if (stopping) process.exit(ExitCode.error);
          stopping = true;
          log.info({ signal }, 'agent stopping');
          agent.stop().then(
            () => process.exit(ExitCode.ok),
            () => process.exit(ExitCode.error),
          );
        };
        process.on('SIGTERM', () => shutdown('SIGTERM'));
        process.on('SIGINT', () => shutdown('SIGINT'));
        log.info(
          { server: flags.server, skipTls: Boolean(flags.skipTls), caFile: flags.caFile, probeConcurrency, probeProtocol },
          'agent starting',
        );
        const exit = await agent.run();
        if (exit === 'replaced') process.exit(ExitCode.error);
        if (exit === 'rejected') {
          process.stderr.write(`monctl agent: ${rejectedMessage(maxAuthFailures)}\n`);
          process.exit(ExitCode.auth);
        }
      })
  );
}
