import type { Command } from 'commander';
import type { Static } from '@sinclair/typebox';
import type { AlertRule } from '../../src/api/schemas/alert-rules.ts';
import { ALERT_EVENT_KINDS } from '../../src/api/kinds.ts';
import { ExitCode, MonctlError } from '../../src/errors.ts';
import { SEVERITIES, type Severity } from '../../src/notifier-fields.ts';
import { ops } from '../api/ops.ts';
import { confirm } from '../io/prompt.ts';
import type { View } from '../output/render.ts';
import { act, type Runtime, resolveRef, withOutput } from '../runtime.ts';
import { offerValues } from './completion-values.ts';

type R = Static<typeof AlertRule> & { notifierNames?: string[] };
const KINDS = ALERT_EVENT_KINDS;

const view: View<R> = {
  columns: [
    { header: 'ID', get: (r) => r.id },
    { header: 'NAME', get: (r) => r.name },
    { header: 'EVENTS', get: (r) => r.events.join(',') },
    { header: 'NOTIFIERS', get: (r) => (r.notifierNames ?? r.notifierIds).join(',') },
    {
      header: 'SCOPE',
      get: (r) =>
        r.scope === 'ALL'
          ? 'all'
          : [
              r.resourceIds.length ? `resources ${r.resourceIds.join(',')}` : '',
              r.groupIds.length ? `groups ${r.groupIds.join(',')}` : '',
              r.agentIds.length ? `agents ${r.agentIds.join(',')}` : '',
            ]
              .filter(Boolean)
              .join('; '),
    },
    { header: 'WAIT', get: (r) => `${r.groupWaitSeconds}s` },
    { header: 'REPEAT', get: (r) => (r.repeatIntervalMinutes === 0 ? 'never' : `${r.repeatIntervalMinutes}m`) },
    { header: 'SEVERITIES', get: (r) => r.severities?.join(','), wide: true },
    { header: 'OVERRIDE', get: (r) => r.severityOverride ?? undefined, wide: true },
    { header: 'ENABLED', get: (r) => (r.enabled ? 'yes' : 'no'), wide: true },
  ],
};

const collect = (value: string, previous: string[] = []) => [
  ...previous,
  ...value
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean),
];

function kinds(values: string[]): R['events'] {
  return values.map((v) => {
    const k = v.toUpperCase().replaceAll('-', '_');
    if (!(KINDS as readonly string[]).includes(k))
      throw new MonctlError('usage', `--event must be one of ${KINDS.join(', ')}, not "${v}"`, ExitCode.usage);
    return k as R['events'][number];
  });
}

function number(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value.replace(/[sm]$/, ''));
  if (!Number.isFinite(n) || n < 0) throw new MonctlError('usage', `${name} must be a number ≥ 0, not "${value}"`, ExitCode.usage);
  return n;
}

interface RuleOpts {
  event?: string[];
  notifier?: string[];
  resource?: string[];
  group?: string[];
  agent?: string[];
  groupWait?: string;
  repeat?: string;
  disabled?: boolean;
  enabled?: boolean;
  all?: boolean;
  name?: string;
  severities?: string[];
  severityOverride?: string;
}

/** `--severities warning,info`: the resource severities a rule routes. */
function severities(values: string[]): Severity[] {
  return values.map((v) => {
    const s = v.toLowerCase();
    if (!(SEVERITIES as readonly string[]).includes(s))
      throw new MonctlError('usage', `--severities takes ${SEVERITIES.join(', ')}, not "${v}"`, ExitCode.usage);
    return s as Severity;
  });
}

/** `--severity-override critical|…|none`: what pagers receive instead of the resource's severity (none: the resource's). */
function override(value: string | undefined, current: R | undefined): Severity | null | undefined {
  if (value === undefined) return current?.severityOverride;
  const s = value.toLowerCase();
  if (s === 'none') return null;
  if (!(SEVERITIES as readonly string[]).includes(s))
    throw new MonctlError('usage', `--severity-override takes ${SEVERITIES.join(', ')} or none, not "${value}"`, ExitCode.usage);
  return s as Severity;
}

async function ids(refs: string[] | undefined, noun: string, list: () => Promise<Array<{ id: number; name: string }>>) {
  if (!refs) return undefined;
  let cache: Array<{ id: number; name: string }> | undefined;
  const cached = async () => (cache ??= await list());
  return Promise.all(refs.map((ref) => resolveRef(ref, noun, cached, (x) => x.name)));
}

async function body(rt: Runtime, opts: RuleOpts, current?: R) {
  const [notifierIds, resourceIds, groupIds, agentIds] = await Promise.all([
    ids(opts.notifier, 'notifier', () => rt.client.call(ops.listNotifiers)),
    ids(opts.resource, 'resource', () => rt.client.call(ops.listAdminResources)),
    ids(opts.group, 'group', () => rt.client.call(ops.listGroups)),
    ids(opts.agent, 'agent', () => rt.client.call(ops.listAgents)),
  ]);
  const all = opts.all === true;
  return {
    name: opts.name ?? current!.name,
    enabled: opts.disabled ? false : opts.enabled ? true : (current?.enabled ?? true),
    events: opts.event ? kinds(opts.event) : current!.events,
    notifierIds: notifierIds ?? current!.notifierIds,
    resourceIds: all ? [] : (resourceIds ?? current?.resourceIds ?? []),
    groupIds: all ? [] : (groupIds ?? current?.groupIds ?? []),
    agentIds: all ? [] : (agentIds ?? current?.agentIds ?? []),
    groupWaitSeconds: number('--group-wait', opts.groupWait) ?? current?.groupWaitSeconds,
    repeatIntervalMinutes: number('--repeat', opts.repeat) ?? current?.repeatIntervalMinutes,
    severities: opts.severities ? severities(opts.severities) : current?.severities,
    severityOverride: override(opts.severityOverride, current),
  };
}

/**
 * Notifier names for the NOTIFIERS column: one list call for all the rules
 * shown, only for tables (json/yaml are the API's objects, with ids).
 */
async function named(rt: Runtime, list: R[]): Promise<R[]> {
  if (rt.structured || list.every((r) => r.notifierIds.length === 0)) return list;
  const byId = new Map((await rt.client.call(ops.listNotifiers)).map((n) => [n.id, n.name]));
  return list.map((r) => ({ ...r, notifierNames: r.notifierIds.map((id) => byId.get(id) ?? `#${id}`) }));
}

const ruleId = (rt: Runtime, ref: string) =>
  resolveRef(
    ref,
    'alert rule',
    () => rt.client.call(ops.listAlertRules),
    (r) => r.name,
  );

function options(cmd: Command): Command {
  cmd
    .option('--event <kind>', `alert event, repeatable or comma-separated: ${KINDS.join(', ')}`, collect)
    .option('--notifier <notifier>', 'notifier id or name, repeatable', collect)
    .option('--resource <resource>', 'limit to a resource (id or name), repeatable', collect)
    .option('--group <group>', "limit to a group's resources (id or name), repeatable", collect)
    .option('--agent <agent>', 'limit to an agent (id or name), repeatable', collect)
    .option('--group-wait <seconds>', 'alerts to one notifier within this many seconds leave as one message (default 30)')
    .option('--repeat <minutes>', 'remind while an incident stays open, every N minutes; 0 never (default 240)')
    .option('--severities <list>', `the resource severities it routes, comma-separated: ${SEVERITIES.join(', ')} (default all)`, collect)
    .option(
      '--severity-override <severity>',
      `what PAGERDUTY and OPSGENIE receive instead of the resource's severity: ${SEVERITIES.join(', ')}, or none`,
    )
    .option('--disabled', 'create or set the rule disabled');
  offerValues(cmd, '--severities', SEVERITIES);
  offerValues(cmd, '--event', KINDS);
  return offerValues(cmd, '--severity-override', [...SEVERITIES, 'none']);
}

export function register(program: Command): void {
  const rules = program.command('alert-rules').description('which notifiers get which alerts (ADMIN)');

  withOutput(rules.command('list').alias('ls').description('list alert rules')).action(
    act(async (rt) => rt.show(await named(rt, await rt.client.call(ops.listAlertRules)), view)),
  );

  withOutput(rules.command('get').description('show an alert rule').argument('<rule>', 'id or name')).action(
    act(async (rt, ref: string) => {
      const [rule] = await named(rt, [await rt.client.call(ops.getAlertRule, { params: { id: await ruleId(rt, ref) } })]);
      await rt.show(rule, view);
    }),
  );

  withOutput(
    options(rules.command('add').description('create an alert rule (every resource and agent unless limited)').argument('<name>')),
  ).action(
    act(async (rt, name: string, opts: RuleOpts) => {
      if (!opts.event?.length) throw new MonctlError('usage', 'give at least one --event', ExitCode.usage);
      if (!opts.notifier?.length) throw new MonctlError('usage', 'give at least one --notifier', ExitCode.usage);
      const r = await rt.client.call(ops.createAlertRule, { body: await body(rt, { ...opts, name }) });
      await rt.done(r, `Created alert rule ${r.name} (id ${r.id}).`);
    }),
  );

  withOutput(
    options(rules.command('update').description('change an alert rule').argument('<rule>', 'id or name'))
      .option('--name <name>', 'new name')
      .option('--enabled', 'enable the rule')
      .option('--all', 'cover every resource and agent again'),
  ).action(
    act(async (rt, ref: string, opts: RuleOpts) => {
      const id = await ruleId(rt, ref);
      const current = await rt.client.call(ops.getAlertRule, { params: { id } });
      const r = await rt.client.call(ops.updateAlertRule, { params: { id }, body: await body(rt, opts, current) });
      await rt.done(r, `Updated alert rule ${r.name} (id ${r.id}).`);
    }),
  );

  rules
    .command('rm')
    .description('delete an alert rule')
    .argument('<rule>', 'id or name')
    .option('-y, --yes', 'do not ask')
    .action(
      act(async (rt, ref: string, opts: { yes?: boolean }) => {
        const id = await ruleId(rt, ref);
        await confirm(`Delete alert rule ${ref}`, opts.yes);
        await rt.client.call(ops.deleteAlertRule, { params: { id } });
        process.stdout.write(`Deleted alert rule ${ref}.\n`);
      }),
    );
}
