import type { Command } from 'commander';
import type { Static } from '@sinclair/typebox';
import type { StatusPage, StatusPagePatch } from '../../src/api/schemas/status-pages.ts';
import { ExitCode, MonctlError } from '../../src/errors.ts';
import { ops } from '../api/ops.ts';
import { confirm } from '../io/prompt.ts';
import type { View } from '../output/render.ts';
import { act, type Runtime, resolveRef, withOutput } from '../runtime.ts';
import { groupIds } from './resources.ts';
import { registerIncidents } from './status-incidents.ts';

type P = Static<typeof StatusPage>;
type Patch = Static<typeof StatusPagePatch>;

/** Group names by id for the GROUPS column: one list call for tables, none for json/yaml (which keep `groupIds`). */
async function groupNames(rt: Runtime): Promise<Map<number, string>> {
  return rt.structured ? new Map() : new Map((await rt.client.call(ops.listGroups)).map((g) => [g.id, g.name]));
}

const view = (names: Map<number, string>): View<P> => ({
  columns: [
    { header: 'ID', get: (p) => p.id },
    { header: 'SLUG', get: (p) => p.slug },
    { header: 'TITLE', get: (p) => p.title },
    { header: 'PATH', get: (p) => `/status/${p.slug}` },
    { header: 'GROUPS', get: (p) => (p.groupIds.length ? p.groupIds.map((id) => names.get(id) ?? id) : '(all)') },
    { header: 'HOSTNAME', get: (p) => p.customHostname },
    { header: 'HTTPS-REDIRECT', get: (p) => p.httpsRedirect, wide: true },
    { header: 'ANNOUNCEMENTS', get: (p) => p.showAnnouncements, wide: true },
    { header: 'INCIDENTS', get: (p) => p.showIncidents, wide: true },
    { header: 'ERROR-DETAILS', get: (p) => p.showErrorDetails, wide: true },
    { header: 'DESCRIPTION', get: (p) => p.description, wide: true },
    { header: 'FOOTER', get: (p) => p.footer, wide: true },
    { header: 'CREATED', get: (p) => p.createdAt, wide: true },
    { header: 'UPDATED', get: (p) => p.updatedAt, wide: true },
  ],
});

export const pageId = (rt: Runtime, ref: string) =>
  resolveRef(
    ref,
    'status page',
    () => rt.client.call(ops.listStatusPages),
    (p) => p.slug,
  );

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** Commander's names: `--no-x` sets `x` to false. */
interface Flags {
  title?: string;
  slug?: string;
  description?: string | false;
  group?: string[];
  groups?: boolean;
  announcements?: boolean;
  incidents?: boolean;
  hostname?: string | false;
  footer?: string | false;
  httpsRedirect?: boolean;
  errorDetails?: boolean;
}

function withPageFlags(cmd: Command, update: boolean): Command {
  cmd
    .option('--title <title>', 'the page title')
    .option('--description <text>', 'a line under the title')
    .option('--group <group>', 'a group to show, id or name (repeat, in order; none: every group the visitor may see)', collect)
    .option('--hostname <host>', 'serve the page at / on the edge listener for this Host')
    .option('--https-redirect', 'plain-HTTP requests for the page on its hostname get a 308 to the HTTPS edge')
    .option('--footer <text>', 'footer text')
    .option('--error-details', "anonymous visitors see the probes' own error messages (addresses, ports), not a generic cause");
  // Positive flags first: commander then leaves both unset unless one is given (no default to send).
  if (update) {
    cmd
      .option('--slug <slug>', 'new slug (the page moves to /status/<slug>)')
      .option('--announcements', 'show active announcements')
      .option('--incidents', 'list recent incidents')
      .option('--no-groups', 'show every group the visitor may see')
      .option('--no-description', 'remove the description')
      .option('--no-hostname', 'stop serving the page on a custom hostname')
      .option('--no-https-redirect', 'serve the page over plain HTTP too')
      .option('--no-error-details', 'anonymous visitors see a generic cause (connection refused, timeout, HTTP 503)')
      .option('--no-footer', 'remove the footer');
  }
  return cmd.option('--no-announcements', 'do not show active announcements').option('--no-incidents', 'do not list recent incidents');
}

async function bodyOf(rt: Runtime, f: Flags, update: boolean): Promise<Patch> {
  const body: Patch = {};
  if (f.slug !== undefined) body.slug = f.slug;
  if (f.title !== undefined) body.title = f.title;
  if (f.description !== undefined) body.description = f.description === false ? null : f.description;
  if (f.group?.length && f.groups === false) throw new MonctlError('usage', 'give --group or --no-groups, not both', ExitCode.usage);
  if (f.group?.length) body.groupIds = await groupIds(rt, f.group);
  else if (f.groups === false) body.groupIds = [];
  if (f.hostname !== undefined) body.customHostname = f.hostname === false ? null : f.hostname;
  if (f.footer !== undefined) body.footer = f.footer === false ? null : f.footer;
  if (f.httpsRedirect !== undefined) body.httpsRedirect = f.httpsRedirect;
  if (f.errorDetails !== undefined) body.showErrorDetails = f.errorDetails;
  // On add, commander sets the negatable booleans to true unless --no-… was given: send only a no.
  if (f.announcements !== undefined && (update || f.announcements === false)) body.showAnnouncements = f.announcements;
  if (f.incidents !== undefined && (update || f.incidents === false)) body.showIncidents = f.incidents;
  return body;
}

export function register(program: Command): void {
  const pages = program.command('status-pages').alias('sp').description('public status pages (ADMIN): /status/<slug>');

  withOutput(pages.command('list').alias('ls').description('list status pages')).action(
    act(async (rt) => {
      const [list, names] = await Promise.all([rt.client.call(ops.listStatusPages), groupNames(rt)]);
      await rt.show(list, view(names));
    }),
  );

  withOutput(pages.command('get').description('show a status page').argument('<page>', 'id or slug')).action(
    act(async (rt, ref: string) => {
      const id = await pageId(rt, ref);
      const [page, names] = await Promise.all([rt.client.call(ops.getStatusPage, { params: { id } }), groupNames(rt)]);
      await rt.show(page, view(names));
    }),
  );

  withOutput(
    withPageFlags(
      pages.command('add').description('create a status page').argument('<slug>', 'a-z, 0-9 and -: the page is at /status/<slug>'),
      false,
    ),
  ).action(
    act(async (rt, slug: string, f: Flags) => {
      if (!f.title) throw new MonctlError('usage', 'give the page a --title', ExitCode.usage);
      const body = { ...(await bodyOf(rt, f, false)), slug, title: f.title };
      const page = await rt.client.call(ops.createStatusPage, { body });
      await rt.done(
        page,
        `Created status page ${page.slug} (id ${page.id}): /status/${page.slug}${page.customHostname ? ` and http://${page.customHostname}/ on the edge` : ''}.`,
      );
    }),
  );

  withOutput(withPageFlags(pages.command('update').description('change a status page').argument('<page>', 'id or slug'), true)).action(
    act(async (rt, ref: string, f: Flags) => {
      const body = await bodyOf(rt, f, true);
      if (Object.keys(body).length === 0)
        throw new MonctlError('usage', 'nothing to update: give at least one option (see --help)', ExitCode.usage);
      const id = await pageId(rt, ref);
      const page = await rt.client.call(ops.updateStatusPage, { params: { id }, body });
      await rt.done(page, `Updated status page ${page.slug} (id ${page.id}).`);
    }),
  );

  pages
    .command('rm')
    .description('delete a status page')
    .argument('<page>', 'id or slug')
    .option('-y, --yes', 'do not ask')
    .action(
      act(async (rt, ref: string, opts: { yes?: boolean }) => {
        const id = await pageId(rt, ref);
        await confirm(`Delete status page ${ref}`, opts.yes);
        await rt.client.call(ops.deleteStatusPage, { params: { id } });
        process.stdout.write(`Deleted status page ${ref}.\n`);
      }),
    );

  registerIncidents(pages, pageId);
}
