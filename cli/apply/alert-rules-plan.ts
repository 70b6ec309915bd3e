import { ExitCode, MonctlError } from '../../src/errors.ts';
import { ops } from '../api/ops.ts';
import type { Runtime } from '../runtime.ts';
import type { AlertRuleSpec } from './alert-rules-spec.ts';
import type { Step } from './step.ts';

type Named = { id: number; name: string };

/**
 * The steps that make the daemon's alert rules match the file, by name. The
 * comparison is by names (the daemon's ids mapped back through its lists),
 * and the names are turned into ids when the step runs, so a rule may name a
 * notifier, group or resource that the same apply creates.
 */
export async function alertRuleSteps(
  rt: Runtime,
  specs: AlertRuleSpec[],
  prune: boolean,
  resourcesOf: { listed: Promise<Named[]>; idOf: (name: string) => number | undefined },
): Promise<{ upserts: Step[]; deletions: Step[] }> {
  const c = rt.client;
  if (specs.length === 0 && !prune) return { upserts: [], deletions: [] };
  const [rules, notifiers, resources, groups, agents] = await Promise.all([
    c.call(ops.listAlertRules),
    c.call(ops.listNotifiers),
    resourcesOf.listed,
    c.call(ops.listGroups),
    c.call(ops.listAgents),
  ]);
  const nameOf = (list: Named[]) => new Map(list.map((x) => [x.id, x.name]));
  const names = { notifiers: nameOf(notifiers), resources: nameOf(resources), groups: nameOf(groups), agents: nameOf(agents) };
  const byName = new Map(rules.map((r) => [r.name, r]));

  // Resolved when the step runs: the lists are read again, after the file's own creates (resources: the
  // plan's ids, which its creates add to; a million resources are not read again for each rule).
  const body = async (spec: AlertRuleSpec) => {
    const [n, g, a] = await Promise.all([c.call(ops.listNotifiers), c.call(ops.listGroups), c.call(ops.listAgents)]);
    const lookup = (list: Named[]) => (name: string) => list.find((x) => x.name === name)?.id;
    const ids = (kind: string, idOf: (name: string) => number | undefined, wanted: string[]) =>
      wanted.map((name) => {
        const id = idOf(name);
        if (id === undefined) throw new MonctlError('not-found', `alert rule ${spec.name}: no ${kind} named "${name}"`, ExitCode.notFound);
        return id;
      });
    return {
      name: spec.name,
      enabled: spec.enabled ?? true,
      events: spec.events as never,
      notifierIds: ids('notifier', lookup(n), spec.notifiers),
      resourceIds: ids('resource', resourcesOf.idOf, spec.resources),
      groupIds: ids('group', lookup(g), spec.groups),
      agentIds: ids('agent', lookup(a), spec.agents),
      ...(spec.groupWaitSeconds === undefined ? {} : { groupWaitSeconds: spec.groupWaitSeconds }),
      ...(spec.repeatIntervalMinutes === undefined ? {} : { repeatIntervalMinutes: spec.repeatIntervalMinutes }),
      ...(spec.severities === undefined ? {} : { severities: spec.severities }),
      ...(spec.severityOverride === undefined ? {} : { severityOverride: spec.severityOverride }),
    };
  };

  const upserts: Step[] = [];
  for (const spec of specs) {
    const cur = byName.get(spec.name);
    if (!cur) {
      upserts.push({
        action: 'create',
        kind: 'alert rule',
        name: spec.name,
        run: async () => void (await c.call(ops.createAlertRule, { body: await body(spec) })),
      });
      continue;
    }
    const sorted = (list: string[]) => [...list].sort().join('\n');
    const mapped = (map: Map<number, string>, ids: number[]) => ids.map((id) => map.get(id) ?? `#${id}`);
    const changes: string[] = [];
    if ((spec.enabled ?? true) !== cur.enabled) changes.push('enabled');
    if (sorted(spec.events) !== sorted(cur.events)) changes.push('events');
    if (sorted(spec.notifiers) !== sorted(mapped(names.notifiers, cur.notifierIds))) changes.push('notifiers');
    if (sorted(spec.resources) !== sorted(mapped(names.resources, cur.resourceIds))) changes.push('resources');
    if (sorted(spec.groups) !== sorted(mapped(names.groups, cur.groupIds))) changes.push('groups');
    if (sorted(spec.agents) !== sorted(mapped(names.agents, cur.agentIds))) changes.push('agents');
    if (spec.groupWaitSeconds !== undefined && spec.groupWaitSeconds !== cur.groupWaitSeconds) changes.push('groupWaitSeconds');
    if (spec.repeatIntervalMinutes !== undefined && Math.abs(spec.repeatIntervalMinutes - cur.repeatIntervalMinutes) > 1 / 120)
      changes.push('repeatIntervalMinutes');
    if (spec.severities && sorted(spec.severities) !== sorted(cur.severities)) changes.push('severities');
    if (spec.severityOverride !== undefined && spec.severityOverride !== cur.severityOverride) changes.push('severityOverride');
    if (changes.length === 0) continue;
    upserts.push({
      action: 'update',
      kind: 'alert rule',
      name: spec.name,
      changes,
      run: async () => {
        const next = await body(spec);
        // Fields the file leaves out keep the daemon's values (PUT replaces).
        await c.call(ops.updateAlertRule, {
          params: { id: cur.id },
          body: {
            groupWaitSeconds: cur.groupWaitSeconds,
            repeatIntervalMinutes: cur.repeatIntervalMinutes,
            severities: cur.severities,
            severityOverride: cur.severityOverride,
            ...next,
          },
        });
      },
    });
  }
  const keep = new Set(specs.map((s) => s.name));
  const deletions: Step[] = prune
    ? rules
        .filter((r) => !keep.has(r.name))
        .map((r) => ({
          action: 'delete' as const,
          kind: 'alert rule' as const,
          name: r.name,
          run: async () => void (await c.call(ops.deleteAlertRule, { params: { id: r.id } })),
        }))
    : [];
  return { upserts, deletions };
}
