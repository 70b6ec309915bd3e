import type { Static } from '@sinclair/typebox';
import type { Command } from 'commander';
import type { PingKey } from '../../src/api/schemas/push.ts';
import { ExitCode, MonctlError } from '../../src/errors.ts';
import { ops } from '../api/ops.ts';
import { confirm } from '../io/prompt.ts';
import type { View } from '../output/render.ts';
import { act, withOutput } from '../runtime.ts';
import { groupIds } from './resource-flags.ts';

/**
 * `monctl ping-keys list|create|rm` (docs/API.md#push-checks): the keys of
 * `/ping/{pingKey}/{slug}`. The daemon has at most one (no group), each group at most one; a
 * key is a secret of the same kind as a ping URL's UUID.
 */
type K = Static<typeof PingKey>;
const view: View<K> = {
  columns: [
    { header: 'ID', get: (k) => k.id },
    { header: 'KEY', get: (k) => k.key },
    { header: 'GROUP', get: (k) => k.groupName ?? "the daemon's" },
    { header: 'ALLOW CREATE', get: (k) => (k.allowCreate ? 'yes' : 'no') },
    { header: 'CREATED', get: (k) => k.createdAt },
  ],
};

export function register(program: Command): void {
  const keys = program.command('ping-keys').description("keys of /ping/{pingKey}/{slug}: the daemon's and one per group (ADMIN)");

  withOutput(keys.command('list').alias('ls').description('list ping keys')).action(
    act(async (rt) => rt.show(await rt.client.call(ops.listPingKeys), view)),
  );

  withOutput(keys.command('create').description("create the daemon's ping key, or a group's with --group (replacing the one it has)"))
    .option('--group <group>', 'the group whose key it is (id or name); without it, the daemon’s')
    .option('--allow-create', 'a ping with ?create=1 to an unknown slug creates the push check')
    .action(
      act(async (rt, opts: { group?: string; allowCreate?: boolean }) => {
        const groupId = opts.group === undefined ? null : (await groupIds(rt, [opts.group]))[0];
        const k = await rt.client.call(ops.createPingKey, { body: { groupId, allowCreate: Boolean(opts.allowCreate) } });
        await rt.done(k, `Created ping key ${k.id} (${k.groupName ? `group ${k.groupName}` : "the daemon's"}): ${k.key}`);
      }),
    );

  keys
    .command('rm')
    .description('delete a ping key: its /ping/{key}/{slug} URLs stop working (the UUID URLs keep working)')
    .argument('<id>', 'the key’s id')
    .option('-y, --yes', 'do not ask')
    .action(
      act(async (rt, ref: string, opts: { yes?: boolean }) => {
        if (!/^\d+$/.test(ref))
          throw new MonctlError('usage', `give the ping key's id (see monctl ping-keys list), not "${ref}"`, ExitCode.usage);
        await confirm(`Delete ping key ${ref}`, opts.yes);
        await rt.client.call(ops.deletePingKey, { params: { id: Number(ref) } });
        process.stdout.write(`Deleted ping key ${ref}.\n`);
      }),
    );
}
