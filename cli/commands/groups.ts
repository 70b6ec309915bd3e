import type { Command } from 'commander';
import type { Static } from '@sinclair/typebox';
import type { Group } from '../../src/api/schemas/monitoring.ts';
import { ExitCode, MonctlError } from '../../src/errors.ts';
import { ops } from '../api/ops.ts';
import { confirm } from '../io/prompt.ts';
import type { View } from '../output/render.ts';
import { act, type Runtime, resolveRef, withOutput } from '../runtime.ts';

type G = Static<typeof Group>;
const view: View<G> = {
  columns: [
    { header: 'ID', get: (g) => g.id },
    { header: 'NAME', get: (g) => g.name },
    { header: 'VISIBILITY', get: (g) => g.visibility },
    { header: 'CREATED', get: (g) => g.createdAt, wide: true },
    { header: 'UPDATED', get: (g) => g.updatedAt, wide: true },
  ],
};

export function visibility(value: string): 'PUBLIC' | 'AUTHENTICATED' | 'HIDDEN' {
  const v = value.toUpperCase();
  if (v !== 'PUBLIC' && v !== 'AUTHENTICATED' && v !== 'HIDDEN') {
    throw new MonctlError('usage', `visibility must be PUBLIC, AUTHENTICATED or HIDDEN, not "${value}"`, ExitCode.usage);
  }
  return v;
}

const groupId = (rt: Runtime, ref: string) =>
  resolveRef(
    ref,
    'group',
    () => rt.client.call(ops.listGroups),
    (g) => g.name,
  );

export function register(program: Command): void {
  const groups = program.command('groups').description('resource groups and their visibility (ADMIN)');

  withOutput(groups.command('list').alias('ls').description('list groups')).action(
    act(async (rt) => rt.show(await rt.client.call(ops.listGroups), view)),
  );

  withOutput(groups.command('get').description('show a group').argument('<group>', 'id or name')).action(
    act(async (rt, ref: string) => {
      const id = await groupId(rt, ref);
      const g = (await rt.client.call(ops.listGroups)).find((x) => x.id === id);
      if (!g) throw new MonctlError('not-found', `group ${ref} does not exist`, ExitCode.notFound);
      await rt.show(g, view);
    }),
  );

  withOutput(groups.command('add').description('create a group').argument('<name>'))
    .option('--visibility <v>', 'PUBLIC, AUTHENTICATED or HIDDEN', 'PUBLIC')
    .action(
      act(async (rt, name: string, opts: { visibility: string }) => {
        const g = await rt.client.call(ops.createGroup, { body: { name, visibility: visibility(opts.visibility) } });
        await rt.done(g, `Created group ${g.name} (id ${g.id}, ${g.visibility}).`);
      }),
    );

  withOutput(groups.command('update').description('rename a group or change its visibility').argument('<group>', 'id or name'))
    .option('--name <name>', 'new name')
    .option('--visibility <v>', 'PUBLIC, AUTHENTICATED or HIDDEN')
    .action(
      act(async (rt, ref: string, opts: { name?: string; visibility?: string }) => {
        if (!opts.name && !opts.visibility)
          throw new MonctlError('usage', 'nothing to update: give --name and/or --visibility', ExitCode.usage);
        const id = await groupId(rt, ref);
        const current = (await rt.client.call(ops.listGroups)).find((x) => x.id === id);
        if (!current) throw new MonctlError('not-found', `group ${ref} does not exist`, ExitCode.notFound);
        // PUT replaces: start from the stored values.
        const body = { name: opts.name ?? current.name, visibility: opts.visibility ? visibility(opts.visibility) : current.visibility };
        const g = await rt.client.call(ops.updateGroup, { params: { id }, body });
        await rt.done(g, `Updated group ${g.name} (id ${g.id}, ${g.visibility}).`);
      }),
    );

  // The daemon refuses to delete a group that still has resources (409): they would silently
  // change visibility. Checked here first, so the user is not asked to confirm a refusal.
  groups
    .command('rm')
    .description('delete an empty group (refused while resources are in it: move them out first)')
    .argument('<group>', 'id or name')
    .option('-y, --yes', 'do not ask')
    .addHelpText(
      'after',
      `
The daemon refuses to delete a group that still has resources: they would silently
change visibility (a HIDDEN group's resources would become public). Move them out first:
  monctl resources update NAME --group OTHER    (or --no-groups)`,
    )
    .action(
      act(async (rt, ref: string, opts: { yes?: boolean }) => {
        const id = await groupId(rt, ref);
        const members = (await rt.client.call(ops.listAdminResources)).filter((r) => r.groups.some((g) => g.id === id)).map((r) => r.name);
        if (members.length) {
          const shown = members.length > 10 ? `${members.slice(0, 10).join(', ')} and ${members.length - 10} more` : members.join(', ');
          throw new MonctlError(
            'conflict',
            `group ${ref} still has ${members.length} resource(s): ${shown}; nothing was deleted.\n` +
              `Move them out first: monctl resources update NAME --group OTHER (or --no-groups)`,
          );
        }
        await confirm(`Delete group ${ref}`, opts.yes);
        await rt.client.call(ops.deleteGroup, { params: { id } });
        process.stdout.write(`Deleted group ${ref}.\n`);
      }),
    );
}
