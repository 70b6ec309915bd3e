import { readFileSync } from 'node:fs';
import type { Static } from '@sinclair/typebox';
import type { Command } from 'commander';
import { POSTED_IMPACTS, POSTED_STATES, type PostedIncident } from '../../src/api/schemas/status-incidents.ts';
import { ExitCode, MonctlError } from '../../src/errors.ts';
import { namingFlags } from '../api/flag-errors.ts';
import { ops } from '../api/ops.ts';
import { confirm, readStdin } from '../io/prompt.ts';
import type { View } from '../output/render.ts';
import { act, type Runtime, withOutput } from '../runtime.ts';
import { resourceId } from './resources.ts';

type Incident = Static<typeof PostedIncident>;
type Impact = (typeof POSTED_IMPACTS)[number];
type State = (typeof POSTED_STATES)[number];

const view: View<Incident> = {
  columns: [
    { header: 'ID', get: (i) => i.id },
    { header: 'TITLE', get: (i) => i.title },
    { header: 'IMPACT', get: (i) => i.impact },
    { header: 'STATE', get: (i) => i.state, status: true },
    { header: 'RESOURCES', get: (i) => i.resources.map((r) => (r.impact === i.impact ? r.name : `${r.name}=${r.impact}`)) },
    { header: 'UPDATED', get: (i) => i.updatedAt },
    { header: 'CREATED', get: (i) => i.createdAt, wide: true },
    { header: 'RESOLVED', get: (i) => i.resolvedAt, wide: true },
    { header: 'UPDATES', get: (i) => i.updates.length, wide: true },
    { header: 'PROMOTED-FROM', get: (i) => i.sourceIncidentId, wide: true },
  ],
};

const timeline: View<Incident['updates'][number]> = {
  columns: [
    { header: 'AT', get: (u) => u.createdAt },
    { header: 'STATE', get: (u) => u.state, status: true },
    { header: 'BY', get: (u) => (u.automatic ? 'monitoring' : 'operator') },
    { header: 'MESSAGE', get: (u) => u.message.replace(/\s+/g, ' ') },
  ],
};

/** A value of one of `values`, else a usage error naming the flag (before any request). */
function oneOf<T extends string>(flag: string, values: readonly T[], value: string | undefined): T | undefined {
  if (value === undefined) return undefined;
  if (!(values as readonly string[]).includes(value))
    throw new MonctlError('usage', `${flag} must be one of ${values.join(', ')}, not "${value}"`, ExitCode.usage);
  return value as T;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];
const numeric = (what: string, ref: string) => {
  if (!/^\d+$/.test(ref)) throw new MonctlError('usage', `${what} is named by its id, not "${ref}"`, ExitCode.usage);
  return Number(ref);
};

/** `--message TEXT` or `--file FILE` (`-`: stdin): the update's Markdown. */
async function message(f: { message?: string; file?: string }): Promise<string | undefined> {
  if (f.message !== undefined && f.file !== undefined) throw new MonctlError('usage', 'give --message or --file, not both', ExitCode.usage);
  if (f.file === '-') return readStdin();
  if (f.file === undefined) return f.message;
  try {
    return readFileSync(f.file, 'utf8');
  } catch (err) {
    throw new MonctlError(
      'usage',
      `cannot read ${f.file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      ExitCode.usage,
    );
  }
}

/** `--resource web` or `--resource web=major` (id or name): resolved to ids, the impact checked here. */
async function resources(rt: Runtime, refs: string[] | undefined) {
  if (!refs?.length) return undefined;
  return Promise.all(
    refs.map(async (ref) => {
      const at = ref.lastIndexOf('=');
      const impact = at < 0 ? undefined : oneOf('--resource …=IMPACT', POSTED_IMPACTS, ref.slice(at + 1));
      const id = await resourceId(rt, at < 0 ? ref : ref.slice(0, at));
      return impact ? { id, impact } : { id };
    }),
  );
}

interface Flags {
  title?: string;
  impact?: string;
  state?: string;
  message?: string;
  file?: string;
  resource?: string[];
}

/** The API's fields, named by the flags that set them in the CLI's messages. */
const FLAGS = {
  title: '--title',
  impact: '--impact',
  state: '--state',
  message: '--message',
  resources: '--resource',
  fromIncidentId: 'the incident',
};

function withPostFlags(cmd: Command, opening: boolean): Command {
  return cmd
    .option('--title <title>', opening ? 'what readers see as the headline' : 'a new headline')
    .option('--impact <impact>', `${POSTED_IMPACTS.join(', ')}${opening ? '' : ' (changes it)'}`)
    .option(
      '--resource <resource>',
      'an affected resource on the page, id or name, with =IMPACT for its own impact (repeat; replaces the list)',
      collect,
    )
    .option('-m, --message <markdown>', "the update's text (Markdown)")
    .option('-f, --file <file>', "the update's text from a file (- for stdin)");
}

/** Summary line of a mutation: `Posted incident 4 on main: identified (3 updates).` */
const said = (verb: string, page: string, i: Incident) =>
  `${verb} incident ${i.id} on ${page}: ${i.state} (${i.updates.length} update${i.updates.length === 1 ? '' : 's'}).`;

/** `monctl status-pages incident …`: incidents posted on a page, with their timeline (docs/API.md#posted-incidents). */
export function registerIncidents(pages: Command, pageId: (rt: Runtime, ref: string) => Promise<number>): void {
  const inc = pages.command('incident').alias('incidents').description('incidents posted on a status page, and their updates');

  withOutput(inc.command('list').alias('ls').description('posted incidents, open first').argument('<page>', 'id or slug'))
    .option('--state <state>', 'open or resolved')
    .option('--limit <n>', 'how many (1 to 1000)', '100')
    .action(
      act(async (rt, ref: string, f: { state?: string; limit: string }) => {
        const state = oneOf('--state', ['open', 'resolved'] as const, f.state);
        if (!/^\d+$/.test(f.limit)) throw new MonctlError('usage', `--limit must be a number, not "${f.limit}"`, ExitCode.usage);
        const id = await pageId(rt, ref);
        const list = await rt.client.call(ops.listPostedIncidents, {
          params: { id },
          query: { limit: Number(f.limit), ...(state ? { state } : {}) },
        });
        await rt.show(list, view);
      }),
    );

  withOutput(
    inc.command('get').description('a posted incident and its timeline').argument('<page>', 'id or slug').argument('<id>', 'incident id'),
  ).action(
    act(async (rt, ref: string, incident: string) => {
      const params = { id: await pageId(rt, ref), incidentId: numeric('a posted incident', incident) };
      const found = await rt.client.call(ops.getPostedIncident, { params });
      await rt.show(found, view);
      if (!rt.structured) await rt.show(found.updates, timeline);
    }),
  );

  withOutput(withPostFlags(inc.command('open').description('post an incident on a page').argument('<page>', 'id or slug'), true))
    .option('--state <state>', `the first update's state: ${POSTED_STATES.join(', ')} (default investigating)`)
    .action(
      act(async (rt, ref: string, f: Flags) => {
        const impact = oneOf('--impact', POSTED_IMPACTS, f.impact);
        const state = oneOf('--state', POSTED_STATES, f.state);
        const text = await message(f);
        if (!f.title) throw new MonctlError('usage', 'give the incident a --title', ExitCode.usage);
        if (!impact) throw new MonctlError('usage', `give its --impact: ${POSTED_IMPACTS.join(', ')}`, ExitCode.usage);
        if (text === undefined) throw new MonctlError('usage', 'say what is happening with --message or --file', ExitCode.usage);
        const id = await pageId(rt, ref);
        const affected = await resources(rt, f.resource);
        const body = { title: f.title, impact, message: text, ...(state ? { state } : {}), ...(affected ? { resources: affected } : {}) };
        const posted = await namingFlags(FLAGS, () => rt.client.call(ops.openPostedIncident, { params: { id }, body }));
        await rt.done(posted, said('Posted', ref, posted));
      }),
    );

  const update = async (rt: Runtime, ref: string, incident: string, f: Flags, fixed?: State) => {
    const state = fixed ?? oneOf('--state', POSTED_STATES, f.state);
    const impact = oneOf('--impact', POSTED_IMPACTS, f.impact);
    const text = (await message(f)) ?? (fixed === 'resolved' ? 'This incident has been resolved.' : undefined);
    if (!state) throw new MonctlError('usage', `give the update's --state: ${POSTED_STATES.join(', ')}`, ExitCode.usage);
    if (text === undefined) throw new MonctlError('usage', 'say what changed with --message or --file', ExitCode.usage);
    const params = { id: await pageId(rt, ref), incidentId: numeric('a posted incident', incident) };
    const affected = await resources(rt, f.resource);
    const body = {
      state,
      message: text,
      ...(f.title ? { title: f.title } : {}),
      ...(impact ? { impact } : {}),
      ...(affected ? { resources: affected } : {}),
    };
    const posted = await namingFlags(FLAGS, () => rt.client.call(ops.postIncidentUpdate, { params, body }));
    await rt.done(posted, said(fixed === 'resolved' ? 'Resolved' : 'Updated', ref, posted));
  };

  withOutput(withPostFlags(inc.command('update').description("add an update to an incident's timeline"), false))
    .argument('<page>', 'id or slug')
    .argument('<id>', 'incident id')
    .option('--state <state>', POSTED_STATES.join(', '))
    .action(act(async (rt, ref: string, incident: string, f: Flags) => update(rt, ref, incident, f)));

  withOutput(withPostFlags(inc.command('resolve').description('resolve an incident (an update with state resolved)'), false))
    .argument('<page>', 'id or slug')
    .argument('<id>', 'incident id')
    .action(act(async (rt, ref: string, incident: string, f: Flags) => update(rt, ref, incident, f, 'resolved')));

  withOutput(
    withPostFlags(
      inc.command('promote').description('post an automatic incident (see `monctl incidents list`), keeping its timeline'),
      true,
    ),
  )
    .argument('<page>', 'id or slug')
    .argument('<incident>', 'the automatic incident id')
    .option('--state <state>', `with --message: its state (default investigating, resolved once the incident is)`)
    .action(
      act(async (rt, ref: string, source: string, f: Flags) => {
        const impact = oneOf('--impact', POSTED_IMPACTS, f.impact);
        const state = oneOf('--state', POSTED_STATES, f.state);
        const text = await message(f);
        if (state && text === undefined) throw new MonctlError('usage', '--state goes with --message or --file', ExitCode.usage);
        const id = await pageId(rt, ref);
        const affected = await resources(rt, f.resource);
        const body = {
          fromIncidentId: numeric('an automatic incident', source),
          ...(f.title ? { title: f.title } : {}),
          ...(impact ? { impact } : {}),
          ...(state ? { state } : {}),
          ...(text !== undefined ? { message: text } : {}),
          ...(affected ? { resources: affected } : {}),
        };
        const posted = await namingFlags(FLAGS, () => rt.client.call(ops.openPostedIncident, { params: { id }, body }));
        await rt.done(posted, said('Posted', ref, posted));
      }),
    );

  inc
    .command('rm')
    .description('delete a posted incident and its timeline')
    .argument('<page>', 'id or slug')
    .argument('<id>', 'incident id')
    .option('-y, --yes', 'do not ask')
    .action(
      act(async (rt, ref: string, incident: string, opts: { yes?: boolean }) => {
        const params = { id: await pageId(rt, ref), incidentId: numeric('a posted incident', incident) };
        await confirm(`Delete posted incident ${incident} of ${ref}`, opts.yes);
        await rt.client.call(ops.deletePostedIncident, { params });
        process.stdout.write(`Deleted posted incident ${incident} of ${ref}.\n`);
      }),
    );
}
