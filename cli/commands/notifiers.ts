import type { Command } from 'commander';
import type { Notifier, NotifierDelivery } from '../../src/api/schemas/notifiers.ts';
import { NOTIFIER_TYPES, type NotifierType, OPSGENIE_REGIONS } from '../../src/notifier-fields.ts';
import { ExitCode, MonctlError } from '../../src/errors.ts';
import { ops } from '../api/ops.ts';
import { confirm } from '../io/prompt.ts';
import { openSecretFile } from '../io/secret-file.ts';
import type { View } from '../output/render.ts';
import { act, type Runtime, resolveRef, withOutput } from '../runtime.ts';
import { configOf, type NotifierFlags, notifierFlags, templatesOf } from './notifier-input.ts';
import { registerTestAndPreview } from './notifier-test.ts';
import { offerValues } from './completion-values.ts';

/** The provider host a type sends to when `apiUrl` is absent (docs/API.md#notifiers). */
const DEFAULT_API: Partial<Record<NotifierType, string>> = {
  TELEGRAM: 'https://api.telegram.org',
  PAGERDUTY: 'https://events.pagerduty.com',
  PUSHOVER: 'https://api.pushover.net',
};

/** Where a notifier sends, in one cell: the server and what it addresses there, never a secret. */
export function destination(n: Notifier): string {
  const c = n.config;
  const api = c.apiUrl ?? DEFAULT_API[n.type];
  switch (n.type) {
    case 'WEBHOOK':
      return c.url ?? '';
    case 'SLACK':
    case 'DISCORD':
    case 'TEAMS':
    case 'GOOGLE_CHAT':
      return `${c.origin ?? ''}/… (secret URL)`;
    case 'NTFY':
      return `${c.url}/${c.topic}`;
    case 'EMAIL':
      return `smtp://${c.host}:${c.port} -> ${(c.to ?? []).join(',')}`;
    case 'TELEGRAM':
      return `${api} -> chat ${c.chatId}`;
    case 'OPSGENIE':
      return c.apiUrl ?? (c.region === 'EU' ? 'https://api.eu.opsgenie.com' : 'https://api.opsgenie.com');
    case 'MATRIX':
      return `${c.homeserver} -> ${c.roomId}`;
    case 'GOTIFY':
      return c.url ?? '';
    default:
      return api ?? '';
  }
}

const secretNames = (n: Notifier) =>
  Object.entries(n.secrets).map(([k, v]) => (Array.isArray(v) ? v.map((h) => `header:${h}`).join(',') : k));

export const notifierView: View<Notifier> = {
  columns: [
    { header: 'ID', get: (n) => n.id },
    { header: 'NAME', get: (n) => n.name },
    { header: 'TYPE', get: (n) => n.type },
    { header: 'ENABLED', get: (n) => n.enabled },
    { header: 'DESTINATION', get: destination },
    { header: 'SECRETS SET', get: secretNames },
    { header: 'PRIORITY', get: (n) => n.config.priority, wide: true },
    { header: 'REGION', get: (n) => n.config.region, wide: true },
    {
      header: 'EMERGENCY',
      get: (n) =>
        n.config.priority === 2 && n.type === 'PUSHOVER'
          ? `every ${n.config.retrySeconds ?? 60}s for ${n.config.expireSeconds ?? 3600}s`
          : undefined,
      wide: true,
    },
    {
      header: 'TEMPLATES',
      get: (n) => [n.titleTemplate !== null ? 'title' : '', n.bodyTemplate !== null ? 'body' : ''].filter(Boolean),
      wide: true,
    },
    { header: 'SECURITY', get: (n) => n.config.security, wide: true },
    { header: 'FROM', get: (n) => n.config.from, wide: true },
    { header: 'USERNAME', get: (n) => n.config.username, wide: true },
    { header: 'CREATED', get: (n) => n.createdAt, wide: true },
    { header: 'UPDATED', get: (n) => n.updatedAt, wide: true },
  ],
};

export const deliveryView: View<NotifierDelivery> = {
  columns: [
    { header: 'ID', get: (a) => a.id },
    { header: 'AT', get: (a) => a.at },
    { header: 'RESULT', get: (a) => (a.ok ? 'OK' : 'FAILED'), status: true },
    { header: 'STATUS', get: (a) => a.statusCode },
    { header: 'MS', get: (a) => a.latencyMs },
    { header: 'ATTEMPT', get: (a) => a.attempt },
    { header: 'NOTIFICATION', get: (a) => a.notificationId ?? 'test' },
    { header: 'MESSAGE', get: (a) => a.messageId, wide: true },
    { header: 'ERROR', get: (a) => a.error },
  ],
};

export const notifierId = (rt: Runtime, ref: string) =>
  resolveRef(
    ref,
    'notifier',
    () => rt.client.call(ops.listNotifiers),
    (n) => n.name,
  );

interface SecretOut {
  outputFile?: string;
  force?: boolean;
}

/** Hands a webhook signing secret over once: to a new 0600 file, or alone on stdout with the warning on stderr. */
async function handOver(
  rt: Runtime,
  flags: SecretOut,
  make: () => Promise<{ secret: string; data: unknown; about: string }>,
): Promise<void> {
  if (flags.force && !flags.outputFile) throw new MonctlError('usage', '--force goes with --output-file', ExitCode.usage);
  const file = flags.outputFile ? openSecretFile(flags.outputFile, Boolean(flags.force)) : undefined;
  let made: Awaited<ReturnType<typeof make>>;
  try {
    made = await make();
  } catch (err) {
    file?.abandon();
    throw err;
  }
  if (file) {
    file.write(made.secret);
    if (rt.structured) return rt.show({ ...(made.data as object), signingSecret: undefined, outputFile: flags.outputFile });
    return rt.info(`${made.about}. Its signing secret was written to ${flags.outputFile} (mode 0600); it is not shown again.`);
  }
  if (rt.structured) return rt.show(made.data);
  rt.info(`${made.about}. Its signing secret follows; save it now, it is not shown again:`);
  process.stdout.write(`${made.secret}\n`);
}

const withSecretFile = (cmd: Command) =>
  cmd
    .option('--output-file <file>', 'WEBHOOK: write the signing secret to this new file (mode 0600) instead of stdout')
    .option('--force', 'with --output-file: replace the file if it exists');

export function register(program: Command): void {
  const notifiers = program.command('notifiers').description(`notification channels: ${NOTIFIER_TYPES.join(', ')} (ADMIN)`);

  withOutput(notifiers.command('list').alias('ls').description('list notifiers (secrets are never shown, only which are set)')).action(
    act(async (rt) => rt.show(await rt.client.call(ops.listNotifiers), notifierView)),
  );

  withOutput(notifiers.command('get').description('show a notifier').argument('<notifier>', 'id or name')).action(
    act(async (rt, ref: string) =>
      rt.show(await rt.client.call(ops.getNotifier, { params: { id: await notifierId(rt, ref) } }), notifierView),
    ),
  );

  withOutput(
    withSecretFile(
      notifierFlags(
        notifiers.command('add').description('add a notifier; secrets are read from stdin or a prompt').argument('<name>'),
        false,
      ),
    ),
  )
    .requiredOption('--type <type>', `${NOTIFIER_TYPES.join(', ')} (any case; GOOGLE-CHAT too)`)
    .option('--disabled', 'create it disabled')
    .action(
      act(async (rt, name: string, f: NotifierFlags & SecretOut & { type: string; disabled?: boolean }) => {
        const type = f.type.toUpperCase().replaceAll('-', '_') as NotifierType;
        if (!NOTIFIER_TYPES.includes(type))
          throw new MonctlError('usage', `--type must be one of ${NOTIFIER_TYPES.join(', ')}`, ExitCode.usage);
        if (f.outputFile && type !== 'WEBHOOK')
          throw new MonctlError('usage', '--output-file is for the signing secret of a WEBHOOK', ExitCode.usage);
        const templates = templatesOf(f, false);
        const config = await configOf(type, f, false);
        const body = { name, type, enabled: !f.disabled, config: config as never, ...templates };
        const create = () => rt.client.call(ops.createNotifier, { body: body as never });
        if (type !== 'WEBHOOK') {
          const n = await create();
          return rt.done(n, `Created notifier ${n.name} (id ${n.id}, ${n.type}).`);
        }
        await handOver(rt, f, async () => {
          const n = await create();
          return { secret: n.signingSecret!, data: n, about: `Created notifier ${n.name} (id ${n.id}, WEBHOOK)` };
        });
      }),
    );

  withOutput(
    notifierFlags(
      notifiers
        .command('update')
        .description('change a notifier (what is not given is kept, secrets included)')
        .argument('<notifier>', 'id or name'),
      true,
    ),
  )
    .option('--name <name>', 'rename')
    .option('--enable', 'send to it')
    .option('--disable', 'stop sending to it')
    .action(
      act(async (rt, ref: string, f: NotifierFlags & { name?: string; enable?: boolean; disable?: boolean }) => {
        if (f.enable && f.disable) throw new MonctlError('usage', 'give --enable or --disable, not both', ExitCode.usage);
        const current = await rt.client.call(ops.getNotifier, { params: { id: await notifierId(rt, ref) } });
        const templates = templatesOf(f, true);
        const config = await configOf(current.type, f, true);
        const body = {
          ...templates,
          ...(f.name ? { name: f.name } : {}),
          ...(f.enable || f.disable ? { enabled: Boolean(f.enable) } : {}),
          ...(Object.keys(config).length ? { config } : {}),
        };
        if (Object.keys(body).length === 0) throw new MonctlError('usage', 'nothing to update: give at least one option', ExitCode.usage);
        const n = await rt.client.call(ops.updateNotifier, { params: { id: current.id }, body });
        await rt.done(n, `Updated notifier ${n.name} (id ${n.id}).`);
      }),
    );

  notifiers
    .command('rm')
    .description('delete a notifier and its delivery log')
    .argument('<notifier>', 'id or name')
    .option('-y, --yes', 'do not ask')
    .action(
      act(async (rt, ref: string, opts: { yes?: boolean }) => {
        const id = await notifierId(rt, ref);
        await confirm(`Delete notifier ${ref}`, opts.yes);
        await rt.client.call(ops.deleteNotifier, { params: { id } });
        process.stdout.write(`Deleted notifier ${ref}.\n`);
      }),
    );

  registerTestAndPreview(notifiers, notifierId);
  const add = notifiers.commands.find((c) => c.name() === 'add')!;
  offerValues(add, '--type', NOTIFIER_TYPES);
  for (const c of [add, notifiers.commands.find((x) => x.name() === 'update')!]) offerValues(c, '--region', OPSGENIE_REGIONS);

  withOutput(notifiers.command('deliveries').description('delivery attempts, newest first').argument('<notifier>', 'id or name'))
    .option('--limit <n>', 'how many (1 to 1000)', '100')
    .option('--before <id>', 'attempts older than this attempt id')
    .action(
      act(async (rt, ref: string, opts: { limit: string; before?: string }) => {
        const query = { limit: Number(opts.limit), ...(opts.before ? { before: Number(opts.before) } : {}) };
        await rt.show(await rt.client.call(ops.listNotifierDeliveries, { params: { id: await notifierId(rt, ref) }, query }), deliveryView);
      }),
    );

  withOutput(
    withSecretFile(
      notifiers
        .command('rotate-secret')
        .description('WEBHOOK: a new signing secret (the old one stops at once)')
        .argument('<notifier>', 'id or name'),
    ),
  )
    .option('-y, --yes', 'do not ask')
    .action(
      act(async (rt, ref: string, f: SecretOut & { yes?: boolean }) => {
        const id = await notifierId(rt, ref);
        await confirm(`Replace the signing secret of ${ref} (receivers must be given the new one)`, f.yes);
        await handOver(rt, f, async () => {
          const { signingSecret } = await rt.client.call(ops.rotateNotifierSigningSecret, { params: { id } });
          return { secret: signingSecret, data: { id, signingSecret }, about: `New signing secret for notifier ${ref}` };
        });
      }),
    );
}
