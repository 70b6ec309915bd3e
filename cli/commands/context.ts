import type { Command } from 'commander';
import { ExitCode, MonctlError } from '../../src/errors.ts';
import { type Context, readConfig, writeConfig } from '../config/config-file.ts';
import { act, withOutput } from '../runtime.ts';

type Row = Context & { name: string; current: boolean };

export function register(program: Command): void {
  const context = program.command('context').description('saved connections (server and API key)');

  withOutput(context.command('list').alias('ls').description('list contexts')).action(
    act(async (rt) => {
      const config = readConfig();
      // Keys are secrets: never printed, only whether one is saved.
      const rows: Row[] = Object.entries(config.contexts).map(([name, c]) => ({
        name,
        current: name === config.current,
        server: c.server,
        user: c.user,
        role: c.role,
        keyId: c.keyId,
      }));
      await rt.show(rows, {
        columns: [
          { header: 'CURRENT', get: (r: Row) => (r.current ? '*' : '') },
          { header: 'NAME', get: (r: Row) => r.name },
          { header: 'SERVER', get: (r: Row) => r.server },
          { header: 'USER', get: (r: Row) => r.user },
          { header: 'ROLE', get: (r: Row) => r.role },
          { header: 'KEY ID', get: (r: Row) => r.keyId, wide: true },
        ],
      });
    }),
  );

  context
    .command('use')
    .description('make a context current')
    .argument('<name>')
    .action(
      act(async (_rt, name: string) => {
        const config = readConfig();
        if (!config.contexts[name]) throw new MonctlError('not-found', `no context named "${name}"`, ExitCode.notFound);
        config.current = name;
        writeConfig(config);
        process.stdout.write(`Current context is now "${name}".\n`);
      }),
    );

  context
    .command('rm')
    .description('remove a context (its API key stays valid on the server)')
    .argument('<name>')
    .action(
      act(async (_rt, name: string) => {
        const config = readConfig();
        if (!config.contexts[name]) throw new MonctlError('not-found', `no context named "${name}"`, ExitCode.notFound);
        delete config.contexts[name];
        if (config.current === name) config.current = undefined;
        writeConfig(config);
        process.stdout.write(`Removed context "${name}".\n`);
      }),
    );
}
