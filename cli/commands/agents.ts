import type { Command } from 'commander';
import type { Agent } from '../../src/api/schemas/tunnel.ts';
import { ExitCode, MonctlError } from '../../src/errors.ts';
import { ops } from '../api/ops.ts';
import { confirm } from '../io/prompt.ts';
import { openSecretFile, type SecretFile } from '../io/secret-file.ts';
import type { View } from '../output/render.ts';
import { act, type Runtime, resolveRef, withOutput } from '../runtime.ts';

export const agentView: View<Agent> = {
  columns: [
    { header: 'ID', get: (a) => a.id },
    { header: 'NAME', get: (a) => a.name },
    { header: 'STATUS', get: (a) => a.status, status: true },
    { header: 'TOKEN', get: (a) => (a.hasToken ? 'yes' : 'no') },
    { header: 'POD', get: (a) => a.podId },
    { header: 'LAST SEEN', get: (a) => a.lastSeenAt },
    { header: 'REMOTE', get: (a) => a.remoteAddress, wide: true },
    { header: 'VERSION', get: (a) => a.version, wide: true },
    { header: 'CONNECTED', get: (a) => a.connectedAt, wide: true },
    { header: 'TOKEN CREATED', get: (a) => a.tokenCreatedAt, wide: true },
    { header: 'CREATED', get: (a) => a.createdAt, wide: true },
  ],
};

interface TokenFlags {
  outputFile?: string;
  force?: boolean;
}

/** `--output-file` and `--force`, for the commands that print a registration token. */
function withTokenFile(cmd: Command): Command {
  return cmd
    .option('--output-file <file>', 'write the token to this new file (mode 0600) instead of stdout')
    .option('--force', 'with --output-file: replace the file if it exists');
}

/**
 * Gives the token to the user: into the file (opened before the token was made), or alone on
 * stdout with the explanation on stderr, or in the json/yaml object.
 */
async function handOver(
  rt: Runtime,
  file: SecretFile | undefined,
  flags: TokenFlags,
  agent: { id: number; name: string },
  token: string,
  about: string,
): Promise<void> {
  if (file) {
    file.write(token);
    if (rt.structured) return rt.show({ agentId: agent.id, outputFile: flags.outputFile });
    return rt.info(`${about} was written to ${flags.outputFile} (mode 0600).`);
  }
  if (rt.structured) return rt.show({ agentId: agent.id, token });
  rt.info(`${about}, shown this once:`);
  process.stdout.write(`${token}\n`);
}

/** Runs `make` with the token file open, removing the file if no token came of it. */
async function withTokenFileOpen(flags: TokenFlags, make: (file: SecretFile | undefined) => Promise<void>): Promise<void> {
  if (flags.force && !flags.outputFile) throw new MonctlError('usage', '--force goes with --output-file', ExitCode.usage);
  const file = flags.outputFile ? openSecretFile(flags.outputFile, Boolean(flags.force)) : undefined;
  let done = false;
  try {
    await make(file);
    done = true;
  } finally {
    if (!done) file?.abandon();
  }
}

export const agentId = (rt: Runtime, ref: string) =>
  resolveRef(
    ref,
    'agent',
    () => rt.client.call(ops.listAgents),
    (a) => a.name,
  );

export function register(program: Command): void {
  const agents = program.command('agents').description('tunnel agents (ADMIN)');

  withOutput(agents.command('list').alias('ls').description('list agents')).action(
    act(async (rt) => rt.show(await rt.client.call(ops.listAgents), agentView)),
  );

  withOutput(agents.command('get').description('show an agent').argument('<agent>', 'id or name')).action(
    act(async (rt, ref: string) => rt.show(await rt.client.call(ops.getAgent, { params: { id: await agentId(rt, ref) } }), agentView)),
  );

  withOutput(withTokenFile(agents.command('add').description('create an agent slot (then: monctl agents token NAME)')))
    .argument('<name>')
    .option('--token', 'also generate its registration token and print it (or write it: --output-file)')
    .action(
      act(async (rt, name: string, opts: TokenFlags & { token?: boolean }) => {
        if (opts.outputFile && !opts.token) throw new MonctlError('usage', '--output-file goes with --token', ExitCode.usage);
        await withTokenFileOpen(opts, async (file) => {
          const agent = await rt.client.call(ops.createAgent, { body: { name } });
          if (!opts.token)
            return rt.done(
              agent,
              `Created agent ${agent.name} (id ${agent.id}). Generate its token with: monctl agents token ${agent.name}`,
            );
          const { token } = await rt.client.call(ops.rotateAgentToken, { params: { id: agent.id } });
          if (rt.structured && !file) return rt.show({ ...agent, hasToken: true, token });
          await handOver(rt, file, opts, agent, token, `Created agent ${agent.name} (id ${agent.id}). Its registration token`);
        });
      }),
    );

  agents
    .command('rm')
    .description('delete an agent (disconnects it; its routes go with it)')
    .argument('<agent>', 'id or name')
    .option('-y, --yes', 'do not ask')
    .action(
      act(async (rt, ref: string, opts: { yes?: boolean }) => {
        const id = await agentId(rt, ref);
        await confirm(`Delete agent ${ref} and its routes`, opts.yes);
        await rt.client.call(ops.deleteAgent, { params: { id } });
        process.stdout.write(`Deleted agent ${ref}.\n`);
      }),
    );

  withOutput(withTokenFile(agents.command('token').description('generate a new registration token (the old one stops working)')))
    .argument('<agent>', 'id or name')
    .option('-y, --yes', 'do not ask, even when this replaces a token')
    .action(
      act(async (rt, ref: string, opts: TokenFlags & { yes?: boolean }) => {
        const id = await agentId(rt, ref);
        const agent = await rt.client.call(ops.getAgent, { params: { id } });
        // The file first: an unwritable path fails before anything is asked or rotated.
        await withTokenFileOpen(opts, async (file) => {
          // Only a replacement is destructive: it disconnects an agent using the old token.
          if (agent.hasToken)
            await confirm(`Replace the token of agent ${agent.name} (an agent using the old one is disconnected)`, opts.yes);
          const { token } = await rt.client.call(ops.rotateAgentToken, { params: { id } });
          await handOver(rt, file, opts, agent, token, `New registration token for agent ${agent.name}`);
        });
      }),
    );
}
