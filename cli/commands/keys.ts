import type { Command } from 'commander';
import type { Static } from '@sinclair/typebox';
import type { ApiKey } from '../../src/api/schemas/auth.ts';
import { ExitCode, MonctlError } from '../../src/errors.ts';
import { ops } from '../api/ops.ts';
import { confirm } from '../io/prompt.ts';
import type { View } from '../output/render.ts';
import { act, resolveRef, withOutput } from '../runtime.ts';

type K = Static<typeof ApiKey> & { token?: string };
const collect = (value: string, previous: string[] = []) => [
  ...previous,
  ...value
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean),
];
const view: View<K> = {
  columns: [
    { header: 'ID', get: (k) => k.id },
    { header: 'NAME', get: (k) => k.name },
    { header: 'ROLE', get: (k) => (k.routeIds.length ? 'ROUTES' : k.role) },
    { header: 'ROUTES', get: (k) => k.routeIds },
    { header: 'CREATED BY', get: (k) => k.createdBy },
    { header: 'EXPIRES', get: (k) => k.expiresAt },
    { header: 'LAST USED', get: (k) => k.lastUsedAt },
    { header: 'CREATED', get: (k) => k.createdAt, wide: true },
  ],
};

export function register(program: Command): void {
  const keys = program.command('keys').description('API keys (ADMIN)');

  withOutput(keys.command('list').alias('ls').description('list API keys')).action(
    act(async (rt) => rt.show(await rt.client.call(ops.listApiKeys), view)),
  );

  withOutput(keys.command('create').description('generate an API key; its token is printed this once'))
    .argument('<name>')
    .option('--role <role>', 'ADMIN or USER', 'ADMIN')
    .option('--expires-at <datetime>', 'YYYY-MM-DDTHH:MM:SS or ISO-8601 with an offset')
    .option(
      '--route <route>',
      'a route key instead: it opens this route (auth apiKey) at the edge and nothing on the API; repeatable',
      collect,
    )
    .action(
      act(async (rt, name: string, opts: { role: string; expiresAt?: string; route?: string[] }) => {
        const role = opts.role.toUpperCase();
        if (role !== 'ADMIN' && role !== 'USER')
          throw new MonctlError('usage', `role must be ADMIN or USER, not "${opts.role}"`, ExitCode.usage);
        const routeIds = opts.route?.length
          ? await Promise.all(
              opts.route.map((ref) =>
                resolveRef(
                  ref,
                  'route',
                  () => rt.client.call(ops.listRoutes),
                  (r) => r.name,
                ),
              ),
            )
          : undefined;
        const body = {
          name,
          ...(routeIds ? { routeIds } : { role: role as 'ADMIN' | 'USER' }),
          ...(opts.expiresAt ? { expiresAt: opts.expiresAt } : {}),
        };
        const key = await rt.client.call(ops.createApiKey, { body });
        if (rt.structured) return rt.show(key);
        // The token alone on stdout, so that `monctl keys create ci > key` works; the rest on stderr.
        rt.info(
          `Created ${key.routeIds.length ? 'route key' : 'API key'} ${key.name} (id ${key.id}, ${key.routeIds.length ? `routes ${key.routeIds.join(', ')}` : key.role}). Its token is shown this once:`,
        );
        process.stdout.write(`${key.token}\n`);
      }),
    );

  keys
    .command('revoke')
    .alias('rm')
    .description('revoke an API key (takes effect on the next request)')
    .argument('<key>', 'id or name')
    .option('-y, --yes', 'do not ask')
    .action(
      act(async (rt, ref: string, opts: { yes?: boolean }) => {
        const id = await resolveRef(
          ref,
          'API key',
          () => rt.client.call(ops.listApiKeys),
          (k) => k.name,
        );
        await confirm(`Revoke API key ${ref}`, opts.yes);
        await rt.client.call(ops.revokeApiKey, { params: { id } });
        process.stdout.write(`Revoked API key ${ref}.\n`);
      }),
    );
}
