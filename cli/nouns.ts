import type { Command } from 'commander';
import type { Runtime } from './runtime.ts';

/**
 * The admin CLI. Each noun's commands live in their own module, loaded only
 * when the command line names that noun: `monctl resources list` never loads
 * Ink, React, YAML or the other nouns (a cold start is paid on every call).
 * Help, completion and unknown commands load the whole table.
 */
type Register = (program: Command) => void | Promise<void>;
/** A read command without arguments whose only own option is `-o`: runnable without commander. */
export type QuickAction = (rt: Runtime) => Promise<void>;
export interface NounModule {
  register: Register;
  /** Quick actions by verb and verb alias (see quickRoute). */
  quick?: Record<string, QuickAction>;
}

export const modules: Record<string, () => Promise<NounModule>> = {
  login: () => import('./commands/login.ts'),
  logout: () => import('./commands/logout.ts'),
  context: () => import('./commands/context.ts'),
  info: () => import('./commands/info.ts'),
  users: () => import('./commands/users.ts'),
  keys: () => import('./commands/keys.ts'),
  'two-factor': () => import('./commands/two-factor.ts'),
  resources: () => import('./commands/resources.ts'),
  announcements: () => import('./commands/announcements.ts'),
  groups: () => import('./commands/groups.ts'),
  cors: () => import('./commands/cors.ts'),
  'registry-credentials': () => import('./commands/registry-credentials.ts'),
  agents: () => import('./commands/agents.ts'),
  routes: () => import('./commands/routes.ts'),
  certs: () => import('./commands/certs.ts'),
  topology: () => import('./commands/topology.ts'),
  status: () => import('./commands/status.ts'),
  notifiers: () => import('./commands/notifiers.ts'),
  'alert-rules': () => import('./commands/alert-rules.ts'),
  'status-pages': () => import('./commands/status-pages.ts'),
  incidents: () => import('./commands/incidents.ts'),
  maintenance: () => import('./commands/maintenance.ts'),
  apply: () => import('./commands/apply.ts'),
  export: () => import('./commands/export.ts'),
  import: () => import('./commands/import.ts'),
  ping: () => import('./commands/ping.ts'),
  run: () => import('./commands/run.ts'),
  'ping-keys': () => import('./commands/ping-keys.ts'),
  completion: async () => {
    const { register } = await import('./commands/completion.ts');
    return { register: (program) => register(program, loadMissingNouns) };
  },
  agent: async () => ({ register: (await import('./agent/command.ts')).registerAgentCommand }),
};

export const nouns: Record<string, (program: Command) => Promise<void>> = Object.fromEntries(
  Object.entries(modules).map(([name, load]) => [name, async (p: Command) => (await load()).register(p)]),
);

/** Loads every noun the program does not have yet: completion's scripts cover the whole tree. */
async function loadMissingNouns(program: Command): Promise<void> {
  for (const [name, load] of Object.entries(nouns)) if (!program.commands.some((c) => c.name() === name)) await load(program);
}
