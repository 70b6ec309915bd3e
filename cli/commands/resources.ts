import type { Command } from 'commander';
import type { Static } from '@sinclair/typebox';
import type { AdminResource, HistoryEntry, LocationResult, ResourcePatch } from '../../src/api/schemas/monitoring.ts';
import { RESOURCE_TYPES } from '../../src/api/kinds.ts';
import { QUORUMS } from '../../src/probes/quorum.ts';
import { ExitCode, HttpError, MonctlError } from '../../src/errors.ts';
import { type FlagNames, namingFlags } from '../api/flag-errors.ts';
import { ops } from '../api/ops.ts';
import type { View } from '../output/render.ts';
import { act, type Runtime, resolveRef, withOutput } from '../runtime.ts';

/** Admins see AdminResource; others the public list item or detail (fields may be absent). */
type R = Partial<Static<typeof AdminResource>> & {
  id: number;
  name: string;
  incidents?: Array<{ id: number; openedAt: string; resolvedAt: string | null }>;
  locationResults?: LocationResult[];
};

/** `office: not_available (503 Service Unavailable)`; an unknown location with its reason. */
function byLocation(l: LocationResult): string {
  return l.status === 'available' || !l.message ? `${l.location}: ${l.status}` : `${l.location}: ${l.status} (${l.message})`;
}

export const view: View<R> = {
  columns: [
    { header: 'ID', get: (r) => r.id },
    { header: 'NAME', get: (r) => r.name },
    { header: 'TYPE', get: (r) => r.resourceType },
    { header: 'TARGET', get: (r) => r.target },
    { header: 'STATUS', get: (r) => r.currentStatus, status: true },
    { header: 'CHECKED', get: (r) => r.latestCheckedAt },
    { header: 'MESSAGE', get: (r) => r.latestMessage, wide: true },
    { header: 'ERROR', get: (r) => r.latestErrorCode, wide: true },
    { header: 'INTERVAL', get: (r) => r.intervalSeconds, wide: true },
    { header: 'GROUPS', get: (r) => r.groups?.map((g) => g.name), wide: true },
    { header: 'ACTIVE', get: (r) => r.active, wide: true },
    { header: 'SKIP TLS', get: (r) => r.skipTLS, wide: true },
    { header: 'RECURSIVE', get: (r) => r.recursive, wide: true },
    {
      header: 'THRESHOLDS',
      get: (r) => (r.failureThreshold === undefined ? undefined : `${r.failureThreshold} down / ${r.successThreshold} up`),
      wide: true,
    },
    { header: 'MAINTENANCE', get: (r) => (r.inMaintenance === undefined ? undefined : r.inMaintenance ? 'yes' : 'no'), wide: true },
    { header: 'CERT EXPIRES', get: (r) => r.certExpiresAt, wide: true },
    { header: 'LOCATIONS', get: (r) => r.locations, wide: true },
    { header: 'QUORUM', get: (r) => r.quorum, wide: true },
    { header: 'CONDITIONS', get: (r) => (r.conditions?.length ? r.conditions : undefined), wide: true },
    // The admin detail: the latest result at each location (unknown says why).
    { header: 'BY LOCATION', get: (r) => r.locationResults?.map(byLocation).join('; '), wide: true },
    // The admin detail's recent incidents (`monctl incidents list --resource NAME` lists them all).
    {
      header: 'OPEN INCIDENT',
      get: (r) => r.incidents?.filter((i) => i.resolvedAt === null).map((i) => `#${i.id} since ${i.openedAt}`),
      wide: true,
    },
    { header: 'CREATED', get: (r) => r.createdAt, wide: true },
  ],
};

export const historyView: View<HistoryEntry> = {
  columns: [
    { header: 'ID', get: (h) => h.id },
    { header: 'CHECKED', get: (h) => h.checkedAt },
    { header: 'STATUS', get: (h) => h.status, status: true },
    { header: 'LOCATION', get: (h) => h.location },
    { header: 'MS', get: (h) => h.durationMs },
    { header: 'ERROR', get: (h) => h.errorCode },
    { header: 'MESSAGE', get: (h) => h.message },
  ],
};

/** Lists through the admin endpoints when the credential is ADMIN (the public list leaves out inactive and hidden ones). */
export const listAll = async (rt: Runtime): Promise<R[]> =>
  rt.isAdmin ? rt.client.call(ops.listAdminResources) : rt.client.call(ops.listResources);
export const resourceId = (rt: Runtime, ref: string) =>
  resolveRef(
    ref,
    'resource',
    () => listAll(rt),
    (r) => r.name,
  );
export const groupIds = (rt: Runtime, refs: string[]) =>
  Promise.all(
    refs.map((g) =>
      resolveRef(
        g,
        'group',
        () => rt.client.call(ops.listGroups),
        (x) => x.name,
      ),
    ),
  );

const collect = (value: string, previous: string[] = []) => [...previous, value];
function interval(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text)) throw new MonctlError('usage', `--interval must be a number of seconds, not "${text}"`, ExitCode.usage);
  return Number(text);
}
/** A threshold, 1 to 100 (the daemon checks the range too, and says which field). */
function threshold(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > 100)
    throw new MonctlError('usage', `${flag} must be a number from 1 to 100, not "${text}"`, ExitCode.usage);
  return Number(text);
}

/** The daemon's fields as `resources add/update` name them. */
const FLAGS: FlagNames = {
  resourceType: '--type',
  target: '--target',
  intervalSeconds: '--interval',
  groupIds: '--group',
  skipTLS: '--skip-tls',
  recursive: '--recursive',
  failureThreshold: '--failure-threshold',
  successThreshold: '--success-threshold',
  locations: '--location',
  quorum: '--quorum',
  conditions: '--condition',
};

/** `--type`, checked before any request: the daemon's 400 would name `resourceType` and exit 1. */
function resourceType(text: string): (typeof RESOURCE_TYPES)[number] {
  const type = text.toUpperCase();
  if (!(RESOURCE_TYPES as readonly string[]).includes(type))
    throw new MonctlError('usage', `--type must be one of ${RESOURCE_TYPES.join(', ')}, not "${text}"`, ExitCode.usage);
  return type as (typeof RESOURCE_TYPES)[number];
}

/** Commander's names: `groups` is update's `--no-groups`, false when given. */
interface Flags {
  type?: string;
  target?: string;
  interval?: string;
  group?: string[];
  groups?: boolean;
  skipTls?: boolean;
  recursive?: boolean;
  active?: boolean;
  name?: string;
  failureThreshold?: string;
  successThreshold?: string;
  location?: string[];
  quorum?: string;
  condition?: string[];
  /** update's `--no-conditions`: false when given. */
  conditions?: boolean;
}

function resourceFlags(cmd: Command): Command {
  return cmd
    .option('--type <type>', 'HTTP, TCP or DOCKER')
    .option('--target <target>', 'URL (HTTP), host:port (TCP) or image reference (DOCKER)')
    .option('--interval <seconds>', 'seconds between checks (10 to 86400)')
    .option('--group <group>', 'group id or name (repeatable)', collect)
    .option('--skip-tls', 'accept self-signed certificates')
    .option('--no-skip-tls', 'verify certificates')
    .option('--recursive', 'DOCKER: check every repository under a namespace')
    .option('--no-recursive', 'not recursive')
    .option('--active', 'checked on schedule')
    .option('--inactive', 'not checked')
    .option('--failure-threshold <n>', 'consecutive failed checks that open an incident (1 to 100, default 3)')
    .option('--success-threshold <n>', 'consecutive good checks that resolve it (1 to 100, default 1)')
    .option('--location <location>', 'where to check it: daemon, or an agent name or id (repeatable; default daemon)', collect)
    .option('--quorum <quorum>', `how the locations decide: ${QUORUMS.join(', ')} (default majority)`)
    .option(
      '--condition <condition>',
      "what up means, in Gatus's syntax: '[BODY].status == UP' (repeatable, all must hold; replaces the list)",
      collect,
    );
}

async function bodyOf(rt: Runtime, f: Flags & { inactive?: boolean }): Promise<Static<typeof ResourcePatch>> {
  const body: Static<typeof ResourcePatch> = {};
  if (f.name) body.name = f.name;
  if (f.type) body.resourceType = resourceType(f.type);
  if (f.target) body.target = f.target;
  if (f.interval !== undefined) body.intervalSeconds = interval(f.interval);
  if (f.group && f.groups === false) throw new MonctlError('usage', 'give --group or --no-groups, not both', ExitCode.usage);
  if (f.group) body.groupIds = await groupIds(rt, f.group);
  if (f.groups === false) body.groupIds = [];
  if (f.skipTls !== undefined) body.skipTLS = f.skipTls;
  if (f.recursive !== undefined) body.recursive = f.recursive;
  if (f.active) body.active = true;
  if (f.inactive) body.active = false;
  if (f.failureThreshold !== undefined) body.failureThreshold = threshold('--failure-threshold', f.failureThreshold);
  if (f.successThreshold !== undefined) body.successThreshold = threshold('--success-threshold', f.successThreshold);
  if (f.location) body.locations = f.location;
  if (f.condition && f.conditions === false)
    throw new MonctlError('usage', 'give --condition or --no-conditions, not both', ExitCode.usage);
  if (f.condition) body.conditions = f.condition;
  if (f.conditions === false) body.conditions = [];
  if (f.quorum !== undefined) {
    const q = f.quorum.toLowerCase();
    if (!(QUORUMS as readonly string[]).includes(q))
      throw new MonctlError('usage', `--quorum must be one of ${QUORUMS.join(', ')}, not "${f.quorum}"`, ExitCode.usage);
    body.quorum = q as (typeof QUORUMS)[number];
  }
  return body;
}

/** Polls the history until the first check is recorded (a new active resource is due at once). */
async function waitForCheck(rt: Runtime, id: number, timeoutS: number): Promise<HistoryEntry> {
  const deadline = Date.now() + timeoutS * 1000;
  for (;;) {
    const [entry] = await rt.client.call(ops.getResourceHistory, { params: { id }, query: { limit: 1 } });
    if (entry) return entry;
    if (Date.now() > deadline) throw new MonctlError('timeout', `no check of resource ${id} within ${timeoutS} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The resource as `resources get` shows it (admin view for an ADMIN credential). */
const getOne = (rt: Runtime, id: number): Promise<R> =>
  rt.isAdmin ? rt.client.call(ops.getAdminResource, { params: { id } }) : rt.client.call(ops.getResource, { params: { id } });

/** Prints a check result; exit 5 when it is NOT_AVAILABLE (docs/API.md#exit-codes-of-the-cli). */
async function reportCheck(rt: Runtime, entry: HistoryEntry): Promise<void> {
  await rt.show(entry, historyView);
  if (entry.status === 'NOT_AVAILABLE') process.exitCode = ExitCode.notAvailable;
}

const list = async (rt: Runtime) => rt.show(await listAll(rt), view);

/** `resources list` without commander (cli/main.ts quickRoute): no arguments, only `-o`. */
export const quick = { list, ls: list };

export function register(program: Command): void {
  const resources = program.command('resources').alias('res').description('monitored resources');

  withOutput(resources.command('list').alias('ls').description('list resources (ADMIN: every resource, inactive and hidden too)')).action(
    act(list),
  );

  withOutput(resources.command('get').description('show a resource').argument('<resource>', 'id or name')).action(
    act(async (rt, ref: string) => {
      await rt.show(await getOne(rt, await resourceId(rt, ref)), view);
    }),
  );

  withOutput(resourceFlags(resources.command('add').description('add a resource').argument('<name>')))
    .option('--wait', 'wait for the first check, then show the resource; exit 5 when NOT_AVAILABLE (not with --inactive)')
    .option('--timeout <seconds>', 'how long --wait waits', '120')
    .action(
      act(async (rt, name: string, f: Flags & { inactive?: boolean; wait?: boolean; timeout: string }) => {
        if (!f.type && f.target && /^https?:\/\//i.test(f.target)) f.type = 'HTTP'; // a URL can only be HTTP
        if (!f.target) throw new MonctlError('usage', 'resources add needs --target (and --type unless it is a URL)', ExitCode.usage);
        if (!f.type) {
          throw new MonctlError(
            'usage',
            `resources add needs --type (one of ${RESOURCE_TYPES.join(', ')}): ` +
              `--target "${f.target}" is not an http:// or https:// URL, the one kind whose type goes without saying`,
            ExitCode.usage,
          );
        }
        // An inactive resource is never checked on schedule: refuse before creating it rather than wait for nothing.
        if (f.wait && f.inactive) {
          throw new MonctlError(
            'usage',
            `--wait waits for the first scheduled check, and an inactive resource has none; nothing was created.\n` +
              `Drop --inactive, or add it and run: monctl resources check ${name}`,
            ExitCode.usage,
          );
        }
        const body = { ...(await bodyOf(rt, f)), name } as Static<typeof ResourcePatch> & {
          name: string;
          resourceType: 'HTTP';
          target: string;
        };
        const created = await namingFlags(FLAGS, () => rt.client.call(ops.createResource, { body }));
        if (!f.wait) return rt.done(created, `Created resource ${created.name} (id ${created.id}).`);
        if (!rt.structured) rt.info(`Created resource ${created.name} (id ${created.id}); waiting for its first check…`);
        const entry = await waitForCheck(rt, created.id, Number(f.timeout));
        // The resource, as without --wait, now with its first result (recorded in the same transaction as the entry).
        // A USER does not see a resource of a HIDDEN group: then the resource as created.
        const shown = await getOne(rt, created.id).catch((err: unknown) => {
          if (err instanceof HttpError && err.status === 404) return created;
          throw err;
        });
        await rt.show(shown, view);
        if (entry.status === 'NOT_AVAILABLE') process.exitCode = ExitCode.notAvailable;
      }),
    );

  withOutput(
    resourceFlags(
      resources.command('update').description('change a resource (fields not given are kept)').argument('<resource>', 'id or name'),
    )
      .option('--name <name>', 'rename')
      .option('--no-groups', 'take it out of every group (--group replaces the groups)')
      .option('--no-conditions', 'remove its conditions'),
  ).action(
    act(async (rt, ref: string, f: Flags & { inactive?: boolean }) => {
      const body = await bodyOf(rt, f);
      if (Object.keys(body).length === 0) throw new MonctlError('usage', 'nothing to update: give at least one option', ExitCode.usage);
      const id = await resourceId(rt, ref);
      const r = await namingFlags({ ...FLAGS, name: '--name' }, () => rt.client.call(ops.updateResource, { params: { id }, body }));
      await rt.done(r, `Updated resource ${r.name} (id ${r.id}).`);
    }),
  );

  resources
    .command('rm')
    .description('delete a resource and its history')
    .argument('<resource>', 'id or name')
    .option('-y, --yes', 'do not ask')
    .action(
      act(async (rt, ref: string, opts: { yes?: boolean }) => {
        const id = await resourceId(rt, ref);
        const { confirm } = await import('../io/prompt.ts');
        await confirm(`Delete resource ${ref} and its history`, opts.yes);
        await rt.client.call(ops.deleteResource, { params: { id } });
        process.stdout.write(`Deleted resource ${ref}.\n`);
      }),
    );

  withOutput(resources.command('history').description('check history, most recent first').argument('<resource>', 'id or name'))
    .option('--limit <n>', 'how many entries (1 to 1000)', '100')
    .option('--before <id>', 'entries older than this entry id')
    .action(
      act(async (rt, ref: string, opts: { limit: string; before?: string }) => {
        const query = { limit: Number(opts.limit), ...(opts.before ? { before: Number(opts.before) } : {}) };
        await rt.show(await rt.client.call(ops.getResourceHistory, { params: { id: await resourceId(rt, ref) }, query }), historyView);
      }),
    );

  withOutput(
    resources.command('check').description('run a check now; exit 5 when NOT_AVAILABLE').argument('<resource>', 'id or name'),
  ).action(
    act(async (rt, ref: string) => {
      await reportCheck(rt, await rt.client.call(ops.checkResource, { params: { id: await resourceId(rt, ref) } }));
    }),
  );
}
