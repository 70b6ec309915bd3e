import type { MaintenanceCreate, MaintenanceWindow } from '../../src/api/schemas/maintenance.ts';
import { MonctlError } from '../../src/errors.ts';
import { ops } from '../api/ops.ts';
import type { Runtime } from '../runtime.ts';
import { didYouMean, fieldNames } from './fields.ts';
import type { Step } from './step.ts';

/**
 * Maintenance windows in `monctl apply -f`, matched by name, with the API's
 * fields and targets by name:
 *
 *   maintenance:
 *     - name: backups
 *       days: [MON, WED]           # WEEKLY (kind is inferred)
 *       startTime: "02:00"
 *       durationMinutes: 90
 *       timeZone: Europe/Paris
 *       groups: [db]
 *     - name: upgrade
 *       startsAt: 2026-12-01T22:00:00+01:00   # ONE_OFF
 *       endsAt: 2026-12-02T01:00:00+01:00
 *       resources: [api]
 */
export interface MaintenanceSpec {
  name: string;
  kind: 'ONE_OFF' | 'WEEKLY';
  startsAt?: string;
  endsAt?: string;
  days?: string[];
  startTime?: string;
  durationMinutes?: number;
  timeZone?: string;
  resources: string[];
  groups: string[];
  agents: string[];
}

type Obj = Record<string, unknown>;
const FIELDS = fieldNames('maintenance');
const DAYS = ['MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT', 'SUN'];

/** Checks one entry of `maintenance:`; reports through `err(path, message)` like the rest of the file. */
export function validateMaintenance(item: Obj, p: string, err: (path: string, msg: string) => void): MaintenanceSpec {
  for (const k of Object.keys(item)) if (!FIELDS.includes(k)) err(`${p}.${k}`, `unknown field${didYouMean(k, FIELDS)}`);
  const text = (k: string) => {
    const v = item[k];
    if (v === undefined || v === null) return undefined;
    // YAML reads an unquoted 2026-12-01T22:00:00Z as a date.
    if (v instanceof Date) return v.toISOString();
    if (typeof v !== 'string' || v.trim() === '') err(`${p}.${k}`, 'must be a non-empty string');
    return typeof v === 'string' ? v : undefined;
  };
  const names = (k: string) => {
    const v = item[k];
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) {
      err(`${p}.${k}`, 'must be a list of names');
      return [];
    }
    return v as string[];
  };
  const weeklyGiven = ['days', 'startTime', 'durationMinutes', 'timeZone'].some((k) => item[k] !== undefined);
  const kind = (text('kind')?.toUpperCase() ?? (weeklyGiven ? 'WEEKLY' : 'ONE_OFF')) as MaintenanceSpec['kind'];
  if (kind !== 'ONE_OFF' && kind !== 'WEEKLY') err(`${p}.kind`, 'must be ONE_OFF or WEEKLY');
  const spec: MaintenanceSpec = {
    name: text('name')!,
    kind,
    startsAt: text('startsAt'),
    endsAt: text('endsAt'),
    startTime: text('startTime'),
    timeZone: text('timeZone'),
    resources: names('resources'),
    groups: names('groups'),
    agents: names('agents'),
  };
  if (spec.name === undefined) err(`${p}.name`, 'is required');
  if (item.days !== undefined) {
    const days = Array.isArray(item.days) ? item.days.map((d) => String(d).toUpperCase()) : [];
    if (days.length === 0 || days.some((d) => !DAYS.includes(d))) err(`${p}.days`, 'must be a list of MON … SUN');
    spec.days = days;
  }
  if (item.durationMinutes !== undefined) {
    const m = item.durationMinutes;
    if (!Number.isInteger(m) || (m as number) < 1 || (m as number) > 10080)
      err(`${p}.durationMinutes`, 'must be an integer from 1 to 10080');
    spec.durationMinutes = m as number;
  }
  const required = kind === 'WEEKLY' ? ['days', 'startTime', 'durationMinutes', 'timeZone'] : ['startsAt', 'endsAt'];
  for (const k of required) if (item[k] === undefined) err(`${p}.${k}`, `is required for ${kind} windows`);
  if (spec.resources.length + spec.groups.length + spec.agents.length === 0) err(p, 'needs at least one of resources, groups, agents');
  return spec;
}

/** What a window's times look like on the daemon's side: its wire form, or UTC for a time with an offset. */
function sameInstant(fromFile: string | undefined, stored: string | null): boolean {
  if (fromFile === undefined || stored === null) return fromFile === undefined && stored === null;
  if (fromFile === stored) return true;
  // With an offset, compare as UTC: exact for a daemon in UTC (the default); elsewhere the window is rewritten, to the same value.
  const ms = Date.parse(fromFile);
  return Number.isFinite(ms) && /([zZ]|[+-]\d{2}:?\d{2})$/.test(fromFile) && new Date(ms).toISOString().slice(0, 19) === stored;
}

/**
 * Create and update steps for the file's windows (after resources and groups
 * exist: ids are looked up when a step runs), and with `prune` delete steps
 * for windows the file does not name.
 */
export async function planMaintenance(
  rt: Runtime,
  specs: MaintenanceSpec[],
  prune: boolean,
  ids: { resources: Map<string, number>; groups: Map<string, number> },
  inFile: { resources: Set<string>; groups: Set<string>; agents: Set<string> },
): Promise<{ steps: Step[]; deletions: Step[] }> {
  if (specs.length === 0 && !prune) return { steps: [], deletions: [] };
  const c = rt.client;
  const [windows, agents] = await Promise.all([
    c.call(ops.listMaintenanceWindows),
    specs.some((s) => s.agents.length) ? c.call(ops.listAgents) : [],
  ]);
  const agentsByName = new Map(agents.map((a) => [a.name, a.id]));
  const missing = specs.flatMap((s) =>
    [
      ...s.resources
        .filter((n) => !inFile.resources.has(n) && !ids.resources.has(n))
        .map((n) => `resource "${n}" is neither in the file nor on the server`),
      ...s.groups
        .filter((n) => !inFile.groups.has(n) && !ids.groups.has(n))
        .map((n) => `group "${n}" is neither in the file nor on the server`),
      ...s.agents
        .filter((n) => !inFile.agents.has(n) && !agentsByName.has(n))
        .map((n) => `agent "${n}" is neither in the file nor on the server`),
    ].map((line) => `  maintenance ${s.name}: ${line}`),
  );
  if (missing.length) throw new MonctlError('invalid-file', `the file is invalid; nothing was changed:\n${missing.join('\n')}`);
  // Looked up when a step runs: resources and groups created earlier in this apply have ids by then.
  const lookup = (map: Map<string, number>, names: string[]) =>
    names.map((n) => {
      const id = map.get(n);
      if (id === undefined) throw new Error(`"${n}" has no id yet`);
      return id;
    });
  const agentIds = (names: string[]) => lookup(agentsByName, names);
  // Agents the same file creates have ids once their steps ran (they come first).
  const refreshAgents = async (s: MaintenanceSpec) => {
    if (s.agents.every((n) => agentsByName.has(n))) return;
    for (const a of await c.call(ops.listAgents)) agentsByName.set(a.name, a.id);
  };
  const bodyOf = (s: MaintenanceSpec): MaintenanceCreate => ({
    name: s.name,
    kind: s.kind,
    ...(s.kind === 'ONE_OFF'
      ? { startsAt: s.startsAt, endsAt: s.endsAt }
      : { days: s.days as MaintenanceCreate['days'], startTime: s.startTime, durationMinutes: s.durationMinutes, timeZone: s.timeZone }),
    resourceIds: lookup(ids.resources, s.resources),
    groupIds: lookup(ids.groups, s.groups),
    agentIds: agentIds(s.agents),
  });
  const steps: Step[] = [];
  for (const s of specs) {
    const cur = windows.find((w) => w.name === s.name);
    if (!cur) {
      steps.push({
        action: 'create',
        kind: 'maintenance',
        name: s.name,
        run: async () => {
          await refreshAgents(s);
          await c.call(ops.createMaintenanceWindow, { body: bodyOf(s) });
        },
      });
      continue;
    }
    const changes = diff(s, cur, bodyOf);
    if (changes.length) {
      steps.push({
        action: 'update',
        kind: 'maintenance',
        name: s.name,
        changes,
        run: async () => {
          await refreshAgents(s);
          const { name: _name, ...body } = bodyOf(s);
          await c.call(ops.updateMaintenanceWindow, { params: { id: cur.id }, body });
        },
      });
    }
  }
  const keep = new Set(specs.map((s) => s.name));
  const deletions: Step[] = prune
    ? windows
        .filter((w) => !keep.has(w.name))
        .map((w) => ({
          action: 'delete' as const,
          kind: 'maintenance' as const,
          name: w.name,
          run: async () => void (await c.call(ops.deleteMaintenanceWindow, { params: { id: w.id } })),
        }))
    : [];
  return { steps, deletions };
}

function diff(s: MaintenanceSpec, cur: MaintenanceWindow, bodyOf: (s: MaintenanceSpec) => MaintenanceCreate): string[] {
  const changes: string[] = [];
  if (s.kind !== cur.kind) changes.push('kind');
  else if (s.kind === 'ONE_OFF') {
    if (!sameInstant(s.startsAt, cur.startsAt)) changes.push('startsAt');
    if (!sameInstant(s.endsAt, cur.endsAt)) changes.push('endsAt');
  } else {
    if ([...(s.days ?? [])].sort().join() !== [...(cur.days ?? [])].sort().join()) changes.push('days');
    if (s.startTime !== cur.startTime) changes.push('startTime');
    if (s.durationMinutes !== cur.durationMinutes) changes.push('durationMinutes');
    if (s.timeZone !== cur.timeZone) changes.push('timeZone');
  }
  // Targets compare by id; names not on the server yet (created by this apply) always differ.
  let body: MaintenanceCreate | undefined;
  try {
    body = bodyOf(s);
  } catch {
    body = undefined;
  }
  const same = (a: number[] | undefined, b: number[]) => a !== undefined && [...a].sort().join() === [...b].sort().join();
  if (!body || !same(body.resourceIds, cur.resourceIds) || !same(body.groupIds, cur.groupIds) || !same(body.agentIds, cur.agentIds)) {
    changes.push('targets');
  }
  return changes;
}
