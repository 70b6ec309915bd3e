import type { Command } from 'commander';
import type { Static } from '@sinclair/typebox';
import type { User } from '../../src/api/schemas/auth.ts';
import { ExitCode, MonctlError } from '../../src/errors.ts';
import { ops } from '../api/ops.ts';
import { confirm, readSecret } from '../io/prompt.ts';
import type { View } from '../output/render.ts';
import { act, type Runtime, resolveRef, withOutput } from '../runtime.ts';

type U = Static<typeof User>;
const view: View<U> = {
  columns: [
    { header: 'ID', get: (u) => u.id },
    { header: 'USERNAME', get: (u) => u.username },
    { header: 'ROLE', get: (u) => u.role },
    { header: '2FA', get: (u) => (u.twoFactor ? 'yes' : 'no') },
    { header: 'SSO', get: (u) => (u.sso ? 'yes' : 'no') },
    { header: 'LAST LOGIN', get: (u) => u.lastLoginMethod, wide: true },
    { header: 'CREATED', get: (u) => u.createdAt },
    { header: 'UPDATED', get: (u) => u.updatedAt, wide: true },
  ],
};

const role = (value: string) => {
  const r = value.toUpperCase();
  if (r !== 'ADMIN' && r !== 'USER') throw new MonctlError('usage', `role must be ADMIN or USER, not "${value}"`, ExitCode.usage);
  return r as 'ADMIN' | 'USER';
};
const userId = (rt: Runtime, ref: string) =>
  resolveRef(
    ref,
    'user',
    () => rt.client.call(ops.listUsers),
    (u) => u.username,
  );

export function register(program: Command): void {
  const users = program.command('users').description('users who log in (ADMIN)');

  withOutput(users.command('list').alias('ls').description('list users')).action(
    act(async (rt) => rt.show(await rt.client.call(ops.listUsers), view)),
  );

  withOutput(users.command('add').description('create a user; the password is prompted, or read from stdin'))
    .argument('<username>')
    .option('--role <role>', 'ADMIN or USER', 'USER')
    .action(
      act(async (rt, username: string, opts: { role: string }) => {
        const r = role(opts.role);
        const password = await readSecret('Password', { confirm: true });
        const user = await rt.client.call(ops.createUser, { body: { username, password, role: r } });
        await rt.done(user, `Created user ${user.username} (id ${user.id}, ${user.role}).`);
      }),
    );

  withOutput(users.command('update').description('change a role, or the password (prompted, or read from stdin)'))
    .argument('<user>', 'id or username')
    .option('--role <role>', 'ADMIN or USER')
    .option('--password', 'set a new password')
    .action(
      act(async (rt, ref: string, opts: { role?: string; password?: boolean }) => {
        if (!opts.role && !opts.password)
          throw new MonctlError('usage', 'nothing to update: give --role and/or --password', ExitCode.usage);
        const body: { role?: 'ADMIN' | 'USER'; password?: string } = {};
        if (opts.role) body.role = role(opts.role);
        const id = await userId(rt, ref);
        if (opts.password) body.password = await readSecret('New password', { confirm: true });
        const user = await rt.client.call(ops.updateUser, { params: { id }, body });
        await rt.done(user, `Updated user ${user.username} (id ${user.id}, ${user.role}).`);
      }),
    );

  withOutput(users.command('reset-2fa').description("reset a user's second factor: the password alone logs in until they enrol again"))
    .argument('<user>', 'id or username')
    .option('-y, --yes', 'do not ask')
    .action(
      act(async (rt, ref: string, opts: { yes?: boolean }) => {
        const id = await userId(rt, ref);
        await confirm(`Reset the second factor of user ${ref}`, opts.yes);
        const user = await rt.client.call(ops.resetTwoFactor, { params: { id } });
        await rt.done(user, `Reset the second factor of user ${user.username} (id ${user.id}).`);
      }),
    );

  users
    .command('rm')
    .description('delete a user (revokes the keys they created)')
    .argument('<user>', 'id or username')
    .option('-y, --yes', 'do not ask')
    .action(
      act(async (rt, ref: string, opts: { yes?: boolean }) => {
        const id = await userId(rt, ref);
        await confirm(`Delete user ${ref}`, opts.yes);
        await rt.client.call(ops.deleteUser, { params: { id } });
        process.stdout.write(`Deleted user ${ref}.\n`);
      }),
    );
}
