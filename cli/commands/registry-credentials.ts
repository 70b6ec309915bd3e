import type { Command } from 'commander';
import type { Static } from '@sinclair/typebox';
import type { RegistryCredential } from '../../src/api/schemas/monitoring-settings.ts';
import { ops } from '../api/ops.ts';
import { confirm, readSecret } from '../io/prompt.ts';
import type { View } from '../output/render.ts';
import { act, resolveRef, withOutput } from '../runtime.ts';

type C = Static<typeof RegistryCredential>;
const view: View<C> = {
  columns: [
    { header: 'ID', get: (c) => c.id },
    { header: 'REGISTRY', get: (c) => c.registry },
    { header: 'USERNAME', get: (c) => c.username },
    { header: 'CREATED', get: (c) => c.createdAt },
  ],
};

export function register(program: Command): void {
  const rc = program.command('registry-credentials').alias('regcred').description('credentials for private container registries (ADMIN)');

  withOutput(rc.command('list').alias('ls').description('list registry credentials (passwords are never shown)')).action(
    act(async (rt) => rt.show(await rt.client.call(ops.listRegistryCredentials), view)),
  );

  withOutput(rc.command('add').description('store a credential; the password is prompted, or read from stdin'))
    .argument('<registry>', 'host[:port]')
    .requiredOption('--username <name>', 'registry user')
    .action(
      act(async (rt, registry: string, opts: { username: string }) => {
        const password = await readSecret('Registry password');
        const c = await rt.client.call(ops.createRegistryCredential, { body: { registry, username: opts.username, password } });
        await rt.done(c, `Stored credential ${c.id} for ${c.registry}.`);
      }),
    );

  rc.command('rm')
    .description('delete a registry credential')
    .argument('<credential>', 'id or registry')
    .option('-y, --yes', 'do not ask')
    .action(
      act(async (rt, ref: string, opts: { yes?: boolean }) => {
        const id = await resolveRef(
          ref,
          'registry credential',
          () => rt.client.call(ops.listRegistryCredentials),
          (c) => c.registry,
        );
        await confirm(`Delete registry credential ${ref}`, opts.yes);
        await rt.client.call(ops.deleteRegistryCredential, { params: { id } });
        process.stdout.write(`Deleted registry credential ${ref}.\n`);
      }),
    );
}
