import type { Command } from 'commander';
import { VERSION } from '../src/version.ts';
import type { OpId } from './api/ops.ts';
import { modules, nouns } from './nouns.ts';
import type { GlobalOptions } from './runtime.ts';

/** Command aliases, so that the alias loads its noun's module. */
const ALIASES: Record<string, string> = {
  res: 'resources',
  ann: 'announcements',
  regcred: 'registry-credentials',
  maint: 'maintenance',
  sp: 'status-pages',
};

/** Options that take a value, so that the noun is not mistaken for one. */
const VALUE_OPTIONS = new Set(['--server', '--context', '--ca-file', '-o', '--output']);

/** The program's own options, which commander takes anywhere on the line. */
const GLOBAL_OPTIONS: Record<string, 'server' | 'context' | 'caFile'> = {
  '--server': 'server',
  '--context': 'context',
  '--ca-file': 'caFile',
};

/**
 * `[globals] noun verb [-o format] [globals]` and nothing else: the one shape
 * in which skipping commander cannot change what happens. Anything else (help,
 * `--opt=value`, `-ojson`, a repeated option, a value starting with `-`, extra
 * words, `--`) returns undefined and goes through commander, so help, errors
 * and exit codes always come from commander.
 */
export function quickRoute(args: string[]): { noun: string; verb: string; opts: GlobalOptions } | undefined {
  // As commander's optsWithGlobals() gives them: `--no-color` defaults to true.
  const opts: GlobalOptions = { color: true };
  const words: string[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (!a.startsWith('-')) {
      if (words.push(a) > 2) return undefined;
      continue;
    }
    // `-o` belongs to the verb: before it, commander would not find the subcommand.
    const key =
      a === '--no-color' ? 'color' : a === '-o' || a === '--output' ? (words.length === 2 ? 'output' : undefined) : GLOBAL_OPTIONS[a];
    if (!key || seen.has(key)) return undefined;
    seen.add(key);
    if (key === 'color') {
      opts.color = false;
      continue;
    }
    const value = args[++i];
    if (value === undefined || value.startsWith('-')) return undefined;
    opts[key] = value;
  }
  if (words.length !== 2) return undefined;
  return { noun: Object.hasOwn(ALIASES, words[0]) ? ALIASES[words[0]] : words[0], verb: words[1], opts };
}

/**
 * Reads whose `-o json` output is the daemon's answer as it is, by noun and
 * verb: their one GET, by whether the credential is ADMIN. The same choice as
 * the command's action (listAll in cli/commands/resources.ts), which
 * test/cli/quick.test.ts compares; the path comes from the generated operation
 * table (cli/api/ops.ts), loaded only when one of these runs.
 */
const resourceList = (admin: boolean): OpId => (admin ? 'listAdminResources' : 'listResources');
const JSON_READS: Record<string, Record<string, (admin: boolean) => OpId>> = {
  resources: { list: resourceList, ls: resourceList },
};

/**
 * `-o json` of a JSON_READS command: the same connection, request, output and
 * errors as its action through the Runtime (test/cli/quick.test.ts compares
 * them), without loading the Runtime and the typed client, and when piped
 * without parsing the answer.
 */
async function jsonRead(read: (admin: boolean) => OpId, opts: GlobalOptions): Promise<void> {
  const [{ resolveConnection }, transport, { ops }, pages] = await Promise.all([
    import('./config/connection.ts'),
    import('./api/transport.ts'),
    import('./api/ops.ts'),
    import('./api/pages.ts'),
  ]);
  const conn = resolveConnection({ server: opts.server, context: opts.context, caFile: opts.caFile });
  if (conn.caFile) (await import('../src/tls/ca-file.ts')).trustCaFile(conn.caFile, conn.caFileSource);
  const auth: Record<string, string> = conn.apiKey ? { authorization: `Bearer ${conn.apiKey}` } : {};
  const get = async (path: string) => {
    const res = await transport.send('GET', conn.server + path, { ...transport.baseHeaders(), ...auth });
    if (res.status >= 200 && res.status < 300) return res;
    const { problemFrom } = await import('../src/client/api-client.ts');
    throw problemFrom(res.status, res.headers['content-type'], res.text);
  };
  const texts = pages.pageTexts(get, ops[read(conn.role === 'ADMIN')].path);
  const tty = Boolean(process.stdout.isTTY);
  // Piped, `-o json` is one line (cli/output/render.ts): the pages' arrays spliced as the daemon
  // sent them, without parsing and serialising them again (about 9 ms of CPU for 1,000 resources).
  if (!tty) return pages.writeJsonPages(texts, (t) => process.stdout.write(t));
  const { printPages } = await import('./output/paged.ts');
  await printPages(texts, undefined, 'json', { colour: false, tty });
}

const own = <T>(table: Record<string, T>, key: string): T | undefined => (Object.hasOwn(table, key) ? table[key] : undefined);

/** Runs the command without commander when quickRoute allows it; false when it does not apply. */
async function runQuick(args: string[]): Promise<boolean> {
  const route = quickRoute(args);
  if (!route) return false;
  const read = own(JSON_READS, route.noun) && own(JSON_READS[route.noun], route.verb);
  if (read && route.opts.output === 'json') {
    await jsonRead(read, route.opts);
    return true;
  }
  const load = own(modules, route.noun);
  const action = load && own((await load()).quick ?? {}, route.verb);
  if (!action) return false;
  const { Runtime } = await import('./runtime.ts');
  await action(new Runtime(route.opts));
  return true;
}

function nounOf(args: string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') return undefined;
    if (a.startsWith('-')) {
      if (VALUE_OPTIONS.has(a)) i++;
      continue;
    }
    return a;
  }
  return undefined;
}

/** What follows a usage error of the program itself (a mistyped noun). */
export const USAGE_HINT = "Run 'monctl --help' for usage.";

export async function buildProgram(args: string[]): Promise<Command> {
  const { Command: CommandClass } = await import('commander');
  const program = new CommandClass('monctl')
    .description('Monitor HTTP, TCP, DNS, ping, TLS, UDP, gRPC, WebSocket, SSH and container-image resources and run reverse tunnels')
    .version(VERSION)
    .option('--server <url>', 'daemon URL (env MONCTL_SERVER)')
    .option('--context <name>', 'use this saved context instead of the current one')
    .option('--ca-file <file>', 'PEM CA certificate(s) to trust for an https:// server, besides the default roots (env MONCTL_CA_FILE)')
    .option('--no-color', 'no colours (also NO_COLOR)')
    .showHelpAfterError()
    .showSuggestionAfterError()
    .exitOverride();
  program.command('daemon').description('run the monctl server (see monctl daemon --help)');
  const word = nounOf(args);
  const noun = word && (Object.hasOwn(ALIASES, word) ? ALIASES[word] : word);
  if (noun && nouns[noun]) await nouns[noun](program);
  else for (const load of Object.values(nouns)) await load(program);
  // Set after the nouns, which inherited `true` (a noun's usage error shows that noun's short help):
  // a mistyped noun gets commander's "Did you mean …?" and this line, not forty lines of help.
  program.showHelpAfterError(USAGE_HINT);
  return program;
}

export async function runCli(argv: string[]): Promise<void> {
  const args = argv.slice(2);
  // `--version` is the cheapest possible call: answer before loading commander, and straight
  // to fd 1 (one short line, written whole): process.stdout on a pipe loads Node's streams.
  if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
    try {
      process.getBuiltinModule('node:fs').writeSync(1, `${VERSION}\n`);
    } catch {
      process.stdout.write(`${VERSION}\n`); // EAGAIN on a full non-blocking pipe, say: as before
    }
    return;
  }
  try {
    // The daemon's config file, when named, tells where it listens and keeps its key (read before any connection).
    if (process.env.MONCTL_CONFIG) await (await import('./config/local-daemon.ts')).loadDaemonConfig();
    if (await runQuick(args)) return;
    const program = await buildProgram(args);
    await program.parseAsync(argv);
  } catch (err) {
    // Loaded only here: a successful call never needs it.
    const { reportError } = await import('./error-boundary.ts');
    process.exitCode = reportError(err);
  }
}
