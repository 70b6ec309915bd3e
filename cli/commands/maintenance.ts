import type { Command } from 'commander';
import type { MaintenanceCreate, MaintenanceWindow } from '../../src/api/schemas/maintenance.ts';
import { ExitCode, MonctlError } from '../../src/errors.ts';
import { type FlagNames, namingFlags } from '../api/flag-errors.ts';
import { ops } from '../api/ops.ts';
import { confirm } from '../io/prompt.ts';
import type { View } from '../output/render.ts';
import { act, type Runtime, resolveRef, withOutput } from '../runtime.ts';

type Row = MaintenanceWindow & { targets?: string };

export function schedule(w: MaintenanceWindow): string {
  if (w.kind === 'ONE_OFF') return `${w.startsAt} to ${w.endsAt}`;
  return `${w.days!.join(',')} ${w.startTime} for ${minutes(w.durationMinutes!)} (${w.timeZone})`;
}

const minutes = (m: number) => (m % 60 === 0 ? `${m / 60}h` : m > 60 ? `${Math.floor(m / 60)}h${m % 60}m` : `${m}m`);

const view: View<Row> = {
  columns: [
    { header: 'ID', get: (w) => w.id },
    { header: 'NAME', get: (w) => w.name },
    { header: 'SCHEDULE', get: schedule },
    { header: 'ACTIVE', get: (w) => (w.activeNow ? 'yes' : 'no') },
    { header: 'NEXT START', get: (w) => w.nextStart },
    { header: 'NEXT END', get: (w) => w.nextEnd },
    {
      header: 'TARGETS',
      get: (w) =>
        w.targets ??
        [...w.resourceIds.map((i) => `resource ${i}`), ...w.groupIds.map((i) => `group ${i}`), ...w.agentIds.map((i) => `agent ${i}`)].join(
          ', ',
        ),
    },
    { header: 'CREATED', get: (w) => w.createdAt, wide: true },
  ],
};

/** `90m`, `1h30m`, `2h` or a number of minutes. */
export function parseMinutes(text: string): number {
  const m = /^\s*(?:(\d+)h)?\s*(?:(\d+)m?)?\s*$/i.exec(text);
  const total = m && (m[1] || m[2]) ? Number(m[1] ?? 0) * 60 + Number(m[2] ?? 0) : NaN;
  if (!Number.isInteger(total) || total < 1)
    throw new MonctlError('usage', `--duration must be like 90m, 1h30m or 2h, not "${text}"`, ExitCode.usage);
  return total;
}

/** The daemon's fields as `maintenance add` names them (errors say `--start`, not `startsAt`). */
const FLAGS: FlagNames = {
  startsAt: '--start',
  endsAt: '--end',
  days: '--weekly',
  startTime: '--at',
  durationMinutes: '--duration',
  timeZone: '--tz',
  resourceIds: '--resource',
  groupIds: '--group',
  agentIds: '--agent',
};

/** ISO-8601 in UTC without milliseconds, as the daemon reads it. */
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * `--start`/`--end`: `now`, `+30m`/`+1h30m` (from now for --start, from the
 * start for --end), or a date-time passed as it is (the daemon parses it and
 * says what it accepts).
 */
export function parseInstant(flag: string, text: string, from: number): string {
  if (text.trim().toLowerCase() === 'now') {
    if (flag === '--end')
      throw new MonctlError('usage', '--end cannot be now: give a date-time or a duration after --start, e.g. +2h', ExitCode.usage);
    return iso(from);
  }
  if (!text.startsWith('+')) return text;
  const minutes = (() => {
    try {
      return parseMinutes(text.slice(1));
    } catch {
      throw new MonctlError(
        'usage',
        `${flag} must be now, +DURATION (e.g. +30m, +1h30m) or a date-time such as 2026-12-01T22:00:00+01:00, not "${text}"`,
        ExitCode.usage,
      );
    }
  })();
  return iso(from + minutes * 60_000);
}

const DAYS = ['MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT', 'SUN'];

export function parseDays(text: string): Array<'MON'> {
  const days = text.split(',').map((d) => d.trim().toUpperCase().slice(0, 3));
  for (const d of days)
    if (!DAYS.includes(d))
      throw new MonctlError('usage', `--weekly takes days such as MON,WED (MON to SUN), not "${text}"`, ExitCode.usage);
  return [...new Set(days)] as Array<'MON'>;
}

/** Names for the TARGETS column (one list call per kind named, only for tables). */
async function named(rt: Runtime, list: MaintenanceWindow[]): Promise<Row[]> {
  if (rt.structured || list.length === 0) return list;
  const any = (k: 'resourceIds' | 'groupIds' | 'agentIds') => list.some((w) => w[k].length > 0);
  const [resources, groups, agents] = await Promise.all([
    any('resourceIds') ? rt.client.call(ops.listAdminResources) : [],
    any('groupIds') ? rt.client.call(ops.listGroups) : [],
    any('agentIds') ? rt.client.call(ops.listAgents) : [],
  ]);
  const names = (all: Array<{ id: number; name: string }>, ids: number[], noun: string) => {
    const byId = new Map(all.map((x) => [x.id, x.name]));
    return ids.map((id) => `${noun} ${byId.get(id) ?? `#${id}`}`);
  };
  return list.map((w) => ({
    ...w,
    targets: [
      ...names(resources, w.resourceIds, 'resource'),
      ...names(groups, w.groupIds, 'group'),
      ...names(agents, w.agentIds, 'agent'),
    ].join(', '),
  }));
}

const windowId = (rt: Runtime, ref: string) =>
  resolveRef(
    ref,
    'maintenance window',
    () => rt.client.call(ops.listMaintenanceWindows),
    (w) => w.name,
  );
const collect = (value: string, previous: string[] = []) => [...previous, value];

interface AddFlags {
  start?: string;
  end?: string;
  weekly?: string;
  at?: string;
  duration?: string;
  tz?: string;
  resource?: string[];
  group?: string[];
  agent?: string[];
}

async function bodyOf(rt: Runtime, name: string, f: AddFlags): Promise<MaintenanceCreate> {
  const oneOff = f.start !== undefined || f.end !== undefined;
  const weekly = f.weekly !== undefined || f.at !== undefined || f.duration !== undefined || f.tz !== undefined;
  if (oneOff === weekly) {
    throw new MonctlError(
      'usage',
      'give either --start and --end (one-off), or --weekly DAYS --at HH:MM --duration D [--tz ZONE]',
      ExitCode.usage,
    );
  }
  const { resourceId, groupIds } = await import('./resources.ts');
  const targets = {
    resourceIds: await Promise.all((f.resource ?? []).map((r) => resourceId(rt, r))),
    groupIds: await groupIds(rt, f.group ?? []),
    agentIds: await Promise.all(
      (f.agent ?? []).map((a) =>
        resolveRef(
          a,
          'agent',
          () => rt.client.call(ops.listAgents),
          (x) => x.name,
        ),
      ),
    ),
  };
  if (targets.resourceIds.length + targets.groupIds.length + targets.agentIds.length === 0) {
    throw new MonctlError('usage', 'name what the window covers: --resource, --group and/or --agent (repeatable)', ExitCode.usage);
  }
  if (oneOff) {
    if (!f.start || !f.end) throw new MonctlError('usage', 'a one-off window needs both --start and --end', ExitCode.usage);
    const startsAt = parseInstant('--start', f.start, Date.now());
    // `--end +2h` counts from the start; from now when the start is a date-time the CLI does not read.
    const start = Date.parse(startsAt);
    return { name, kind: 'ONE_OFF', startsAt, endsAt: parseInstant('--end', f.end, Number.isNaN(start) ? Date.now() : start), ...targets };
  }
  if (!f.weekly || !f.at || !f.duration)
    throw new MonctlError('usage', 'a weekly window needs --weekly DAYS, --at HH:MM and --duration', ExitCode.usage);
  // The time zone of this machine unless told: "02:00" means what the user reads on their clock.
  const timeZone = f.tz ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
  return {
    name,
    kind: 'WEEKLY',
    days: parseDays(f.weekly),
    startTime: f.at,
    durationMinutes: parseMinutes(f.duration),
    timeZone,
    ...targets,
  };
}

export function register(program: Command): void {
  const maintenance = program
    .command('maintenance')
    .alias('maint')
    .description('maintenance windows: checks run, alerts stay quiet (ADMIN)');

  withOutput(maintenance.command('list').alias('ls').description('maintenance windows, with whether they are open now')).action(
    act(async (rt) => rt.show(await named(rt, await rt.client.call(ops.listMaintenanceWindows)), view)),
  );

  withOutput(maintenance.command('get').description('show a maintenance window').argument('<window>', 'id or name')).action(
    act(async (rt, ref: string) => {
      const [w] = await named(rt, [await rt.client.call(ops.getMaintenanceWindow, { params: { id: await windowId(rt, ref) } })]);
      await rt.show(w, view);
    }),
  );

  withOutput(maintenance.command('add').description('add a one-off or weekly maintenance window').argument('<name>'))
    .option(
      '--start <datetime>',
      "one-off: start: now, +30m (from now), or e.g. 2026-12-01T22:00:00+01:00 (no offset: the daemon's time zone)",
    )
    .option('--end <datetime>', 'one-off: end: +2h (after --start) or a date-time')
    .option('--weekly <days>', 'weekly: days it starts on, e.g. MON,WED')
    .option('--at <HH:MM>', 'weekly: local start time')
    .option('--duration <duration>', 'weekly: how long, e.g. 90m or 2h')
    .option('--tz <zone>', "weekly: IANA time zone, e.g. Europe/Paris (default: this machine's)")
    .option('--resource <resource>', 'a resource it covers, id or name (repeatable)', collect)
    .option('--group <group>', 'a group whose resources it covers (repeatable)', collect)
    .option('--agent <agent>', 'a tunnel agent it covers (repeatable)', collect)
    .addHelpText(
      'after',
      `
Examples:
  monctl maintenance add upgrade --start 2026-12-01T22:00:00+01:00 --end 2026-12-02T01:00:00+01:00 --group db
  monctl maintenance add hotfix --start now --end +30m --resource api
  monctl maintenance add backups --weekly MON,WED --at 02:00 --duration 90m --tz Europe/Paris --resource api`,
    )
    .action(
      act(async (rt, name: string, f: AddFlags) => {
        const body = await bodyOf(rt, name, f);
        const w = await namingFlags(FLAGS, () => rt.client.call(ops.createMaintenanceWindow, { body }));
        await rt.done(
          w,
          `Created maintenance window ${w.name} (id ${w.id}): ${schedule(w)}${w.activeNow ? ', open now' : `, next ${w.nextStart ?? 'never'}`}.`,
        );
      }),
    );

  maintenance
    .command('rm')
    .description('delete a maintenance window')
    .argument('<window>', 'id or name')
    .option('-y, --yes', 'do not ask')
    .action(
      act(async (rt, ref: string, opts: { yes?: boolean }) => {
        const id = await windowId(rt, ref);
        await confirm(`Delete maintenance window ${ref}`, opts.yes);
        await rt.client.call(ops.deleteMaintenanceWindow, { params: { id } });
        process.stdout.write(`Deleted maintenance window ${ref}.\n`);
      }),
    );
}
