import type { Command } from 'commander';
import type { HistoryEntry } from '../../src/api/schemas/monitoring.ts';
import { ExitCode, HttpError, MonctlError } from '../../src/errors.ts';
import { namingFlags } from '../api/flag-errors.ts';
import { ops } from '../api/ops.ts';
import { allPages, PAGE_SIZE, pageTexts } from '../api/pages.ts';
import { printPages } from '../output/paged.ts';
import { act, type Runtime, resolveRef, withOutput } from '../runtime.ts';
import { hasCheckOptionFlags } from './check-option-flags.ts';
import { pushFlags } from './push-flags.ts';
import { historyViewFor, withAbsoluteUrls } from './push-view.ts';
import { createBody, RESOURCE_FLAG_NAMES, type ResourceFlags, resourceBody, resourceFlags } from './resource-flags.ts';
import { historyView, type R, view } from './resource-view.ts';
import { registerTest } from './resource-test.ts';

export { groupIds } from './resource-flags.ts';
export { historyView, view };

/** Lists through the admin endpoints when the credential is ADMIN (the public list leaves out inactive and hidden ones). */
export const listAll = async (rt: Runtime): Promise<R[]> => allPages<R>(getter(rt), listPath(rt));
const listPath = (rt: Runtime) => (rt.isAdmin ? ops.listAdminResources : ops.listResources).path;
const getter = (rt: Runtime) => (path: string) => rt.client.raw('GET', path);
export const resourceId = (rt: Runtime, ref: string) =>
  resolveRef(
    ref,
    'resource',
    () => listAll(rt),
    (r) => r.name,
  );
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

/** The resource as `resources get` shows it (admin view for an ADMIN credential, its ping URLs absolute). */
const getOne = async (rt: Runtime, id: number): Promise<R> =>
  rt.isAdmin
    ? withAbsoluteUrls(rt.conn.server, await rt.client.call(ops.getAdminResource, { params: { id } }))
    : rt.client.call(ops.getResource, { params: { id } });

/** After creating a push check: where the job pings (the create answer is the public view, without them). */
async function printPingUrls(rt: Runtime, id: number): Promise<void> {
  const { push } = await getOne(rt, id);
  if (!push) return;
  process.stdout.write(`Ping URL: ${push.pingUrl}\n`);
  if (push.slugUrl) process.stdout.write(`Slug URL: ${push.slugUrl}\n`);
}

/** Prints a check result; exit 5 when it is NOT_AVAILABLE (docs/API.md#exit-codes-of-the-cli). */
async function reportCheck(rt: Runtime, entry: HistoryEntry): Promise<void> {
  await rt.show(entry, historyView);
  if (entry.status === 'NOT_AVAILABLE') process.exitCode = ExitCode.notAvailable;
}

/** A ping's whole kept body, as the daemon keeps it (up to 100 KiB), on stdout as it is. */
async function printPingBody(rt: Runtime, id: number, entry: string): Promise<void> {
  if (!/^\d+$/.test(entry)) throw new MonctlError('usage', `--body takes a history entry id, not "${entry}"`, ExitCode.usage);
  const path = ops.getPingBody.path.replace('{id}', String(id)).replace('{historyId}', entry);
  process.stdout.write((await rt.client.raw('GET', path, undefined, { accept: 'text/plain' })).text);
}

/** Page by page (cli/api/pages.ts), printed as the pages come. */
const list = async (rt: Runtime, opts: { pageSize?: string } = {}) =>
  printPages(pageTexts(getter(rt), listPath(rt), pageSize(opts.pageSize)), view, rt.format, { colour: rt.colour, tty: rt.tty });

function pageSize(value: string | undefined): number {
  if (value === undefined) return PAGE_SIZE;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > PAGE_SIZE)
    throw new MonctlError('usage', `--page-size takes 1 to ${PAGE_SIZE}, not "${value}"`, ExitCode.usage);
  return n;
}

/** `resources list` without commander (cli/main.ts quickRoute): no arguments, only `-o`. */
export const quick = { list, ls: list };

export function register(program: Command): void {
  const resources = program.command('resources').alias('res').description('monitored resources');

  withOutput(resources.command('list').alias('ls').description('list resources (ADMIN: every resource, inactive and hidden too)'))
    .option('--page-size <n>', `resources per request (1 to ${PAGE_SIZE}); the list is printed as the pages come`)
    .action(act(list));

  withOutput(resources.command('get').description('show a resource').argument('<resource>', 'id or name')).action(
    act(async (rt, ref: string) => {
      await rt.show(await getOne(rt, await resourceId(rt, ref)), view);
    }),
  );

  withOutput(
    pushFlags(
      resourceFlags(
        resources.command('add').description('add a resource; with --push, a push check, and print its ping URL').argument('<name>'),
      ),
    ),
  )
    .option('--wait', 'wait for the first check, then show the resource; exit 5 when NOT_AVAILABLE (not with --inactive)')
    .option('--wait-timeout <seconds>', 'how long --wait waits', '120')
    .action(
      act(async (rt, name: string, f: ResourceFlags & { wait?: boolean; waitTimeout: string }) => {
        // An inactive resource is never checked on schedule: refuse before creating it rather than wait for nothing.
        if (f.wait && f.inactive) {
          throw new MonctlError(
            'usage',
            `--wait waits for the first scheduled check, and an inactive resource has none; nothing was created.\n` +
              `Drop --inactive, or add it and run: monctl resources check ${name}`,
            ExitCode.usage,
          );
        }
        if (f.wait && f.push)
          throw new MonctlError('usage', '--wait waits for a check, and a push check has none: drop --wait', ExitCode.usage);
        const body = await createBody(rt, name, f);
        // A push check's target is its slug, set by --slug.
        const flags = f.push ? { ...RESOURCE_FLAG_NAMES, target: '--slug' } : RESOURCE_FLAG_NAMES;
        const created = await namingFlags(flags, () => rt.client.call(ops.createResource, { body }));
        if (f.push && rt.structured) return rt.show(await getOne(rt, created.id));
        if (!f.wait) await rt.done(created, `Created resource ${created.name} (id ${created.id}).`);
        if (f.push) return printPingUrls(rt, created.id);
        if (!f.wait) return;
        if (!rt.structured) rt.info(`Created resource ${created.name} (id ${created.id}); waiting for its first check…`);
        const entry = await waitForCheck(rt, created.id, Number(f.waitTimeout));
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
    pushFlags(
      resourceFlags(
        resources.command('update').description('change a resource (fields not given are kept)').argument('<resource>', 'id or name'),
        true,
      ),
      true,
    )
      .option('--name <name>', 'rename')
      .option('--no-groups', 'take it out of every group (--group replaces the groups)')
      .option('--no-conditions', 'remove its conditions'),
  ).action(
    act(async (rt, ref: string, f: ResourceFlags) => {
      // A type's option flags need the type: --type, else the stored one (read first; the PATCH follows the checks).
      const known = f.type || !hasCheckOptionFlags(f) ? undefined : await resourceId(rt, ref);
      const stored = known === undefined ? undefined : (await rt.client.call(ops.getAdminResource, { params: { id: known } })).resourceType;
      const body = await resourceBody(rt, f, true, stored);
      if (Object.keys(body).length === 0) throw new MonctlError('usage', 'nothing to update: give at least one option', ExitCode.usage);
      const id = known ?? (await resourceId(rt, ref));
      const r = await namingFlags({ ...RESOURCE_FLAG_NAMES, name: '--name', ...(f.slug ? { target: '--slug' } : {}) }, () =>
        rt.client.call(ops.updateResource, { params: { id }, body }),
      );
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
    .option('--body <entryId>', "PUSH: print the whole kept body of this entry's ping (history shows its first bytes)")
    .action(
      act(async (rt, ref: string, opts: { limit: string; before?: string; body?: string }) => {
        if (opts.body !== undefined) return printPingBody(rt, await resourceId(rt, ref), opts.body);
        const query = { limit: Number(opts.limit), ...(opts.before ? { before: Number(opts.before) } : {}) };
        const entries = await rt.client.call(ops.getResourceHistory, { params: { id: await resourceId(rt, ref) }, query });
        await rt.show(entries, historyViewFor(entries, historyView));
      }),
    );

  withOutput(
    resources.command('check').description('run a check now; exit 5 when NOT_AVAILABLE').argument('<resource>', 'id or name'),
  ).action(
    act(async (rt, ref: string) => {
      await reportCheck(rt, await rt.client.call(ops.checkResource, { params: { id: await resourceId(rt, ref) } }));
    }),
  );
  registerTest(resources);
}
