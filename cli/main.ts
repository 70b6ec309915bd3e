import type { Command } from 'commander';
import { VERSION } from '../src/version.ts';
import { reportError } from './error-boundary.ts';

/**
 * The admin CLI. Each noun's commands live in their own module, loaded only
 * when the command line names that noun: `monctl resources list` never loads
 * Ink, React, YAML or the other nouns (a cold start is paid on every call).
 * Help, completion and unknown commands load the whole table.
 */
type Register = (program: Command) => void | Promise<void>;
const mod = (load: () => Promise<{ register: Register }>): (p: Command) => Promise<void> => async (p) => (await load()).register(p);

export const nouns: Record<string, (program: Command) => Promise<void>> = {
  login: mod(() => import('./commands/login.ts')),
  logout: mod(() => import('./commands/logout.ts')),
  context: mod(() => import('./commands/context.ts')),
  info: mod(() => import('./commands/info.ts')),
  users: mod(() => import('./commands/users.ts')),
  keys: mod(() => import('./commands/keys.ts')),
  resources: mod(() => import('./commands/resources.ts')),
  announcements: mod(() => import('./commands/announcements.ts')),
  groups: mod(() => import('./commands/groups.ts')),
  cors: mod(() => import('./commands/cors.ts')),
  'registry-credentials': mod(() => import('./commands/registry-credentials.ts')),
  agents: mod(() => import('./commands/agents.ts')),
  routes: mod(() => import('./commands/routes.ts')),
  topology: mod(() => import('./commands/topology.ts')),
  status: mod(() => import('./commands/status.ts')),
  apply: mod(() => import('./commands/apply.ts')),
  completion: mod(() => import('./commands/completion.ts')),
  agent: async (p) => (await import('./agent/command.ts')).registerAgentCommand(p),
};

/** Command aliases, so that the alias loads its noun's module. */
const ALIASES: Record<string, string> = { res: 'resources', ann: 'announcements', regcred: 'registry-credentials' };

/** Options that take a value, so that the noun is not mistaken for one. */
const VALUE_OPTIONS = new Set(['--server', '--context', '-o', '--output']);

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

export async function buildProgram(args: string[]): Promise<Command> {
  const { Command: CommandClass } = await import('commander');
  const program = new CommandClass('monctl')
    .description('Monitor HTTP, TCP and container-image resources and run reverse tunnels')
    .version(VERSION)
    .option('--server <url>', 'daemon URL (env MONCTL_SERVER)')
    .option('--context <name>', 'use this saved context instead of the current one')
    .option('--no-color', 'no colours (also NO_COLOR)')
    .showHelpAfterError()
    .showSuggestionAfterError()
    .exitOverride();
  program.command('daemon').description('run the monctl server (see monctl daemon --help)');
  const word = nounOf(args);
  const noun = word && (ALIASES[word] ?? word);
  if (noun && nouns[noun]) await nouns[noun](program);
  else for (const load of Object.values(nouns)) await load(program);
  return program;
}

export async function runCli(argv: string[]): Promise<void> {
  const args = argv.slice(2);
  // `--version` is the cheapest possible call: answer before loading commander.
  if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
    process.stdout.write(`${VERSION}\n`);
    return;
  }
  try {
    const program = await buildProgram(args);
    await program.parseAsync(argv);
  } catch (err) {
    process.exitCode = reportError(err);
  }
}
