import { ExitCode, MonctlError } from '../../src/errors.ts';
import { type Draft, newDraft, slug } from './draft.ts';
import { mapAlerting } from './gatus-alerting.ts';
import { mapEndpoint, seconds } from './gatus-endpoints.ts';

/**
 * Gatus's config (`endpoints`, `external-endpoints`, `alerting`, `maintenance`) as an apply file.
 * Each endpoint alert becomes membership of an alert rule per provider (and whether it sends
 * resolutions); its thresholds become the resource's. External endpoints become PUSH resources.
 */
type Obj = Record<string, unknown>;
const DAYS: Record<string, string> = {
  monday: 'MON',
  tuesday: 'TUE',
  wednesday: 'WED',
  thursday: 'THU',
  friday: 'FRI',
  saturday: 'SAT',
  sunday: 'SUN',
};
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter((x): x is Obj => typeof x === 'object' && x !== null) : []);

/** The alerts of an endpoint: thresholds onto the resource, membership into the rules. */
function alerts(d: Draft, r: Obj, e: Obj, alerting: Obj, notifiers: Map<string, string>, rules: Map<string, string[]>): void {
  for (const raw of list(e.alerts)) {
    const provider = String(raw.type ?? '');
    const a = { ...((alerting[provider] as Obj | undefined)?.['default-alert'] as Obj | undefined), ...raw };
    if (a.enabled === false) continue;
    const notifier = notifiers.get(provider);
    if (!notifier) {
      d.report.push(`endpoint "${r.name}": alert ${provider} left out: no notifier was made for it`);
      continue;
    }
    if (a['provider-override'] && typeof a['provider-override'] === 'object')
      d.report.push(`endpoint "${r.name}": alert ${provider}'s provider-override left out: the alert goes to ${notifier}`);
    if (r.type !== 'PUSH') {
      r.failureThreshold ??= Math.min(100, Number(a['failure-threshold'] ?? 3));
      r.successThreshold ??= Math.min(100, Number(a['success-threshold'] ?? 2));
    }
    const key = `${notifier}${a['send-on-resolved'] === true ? '-resolved' : ''}`;
    rules.set(key, [...(rules.get(key) ?? []), r.name as string]);
  }
}

function maintenance(d: Draft, m: Obj, name: string, resources: string[]): void {
  const start = typeof m.start === 'string' ? m.start.padStart(5, '0') : undefined;
  const duration = seconds(m.duration);
  if (!start || !duration || resources.length === 0) return void d.report.push(`maintenance "${name}": no start, duration or endpoint`);
  const every = Array.isArray(m.every) && m.every.length ? m.every.map((x) => DAYS[String(x).toLowerCase()]) : Object.values(DAYS);
  d.maintenance.push({
    name,
    days: every.filter(Boolean),
    startTime: start,
    durationMinutes: Math.min(10080, Math.max(1, Math.round(duration / 60))),
    timeZone: typeof m.timezone === 'string' && m.timezone ? m.timezone : 'UTC',
    resources,
  });
}

export function importGatus(config: unknown): Draft {
  if (typeof config !== 'object' || config === null || (!('endpoints' in config) && !('external-endpoints' in config)))
    throw new MonctlError('invalid-file', 'not a Gatus config: it has no endpoints or external-endpoints', ExitCode.usage);
  const c = config as Obj;
  const d = newDraft();
  const alerting = (c.alerting ?? {}) as Obj;
  const notifiers = mapAlerting(d, alerting);
  const rules = new Map<string, string[]>();
  const endpoints = list(c.endpoints);
  const names = endpoints.map((e) => String(e.name));
  const nameOf = (e: Obj, i: number) =>
    names.indexOf(names[i]) !== i || names.lastIndexOf(names[i]) !== i ? `${e.group}/${e.name}` : names[i];
  endpoints.forEach((e, i) => {
    const r = mapEndpoint(d, e, nameOf(e, i));
    if (!r) return;
    d.resources.push(r);
    alerts(d, r, e, alerting, notifiers, rules);
    list(e['maintenance-windows']).forEach((m, j) => maintenance(d, m, `${r.name}-${j + 1}`, [r.name as string]));
  });
  for (const e of list(c['external-endpoints'])) {
    const name = String(e.name);
    const r: Obj = { name, type: 'PUSH', target: slug(name) };
    const period = seconds((e.heartbeat as Obj | undefined)?.interval);
    if (period) r.periodSeconds = Math.max(10, period);
    else d.report.push(`external endpoint "${name}": no heartbeat interval: monctl's default period applies`);
    if (typeof e.group === 'string' && e.group) r.groups = [e.group];
    if (e.enabled === false) r.active = false;
    d.report.push(`external endpoint "${name}": pushes go to monctl's ping URL for ${r.target} now, not Gatus's API`);
    d.resources.push(r);
    alerts(d, r, e, alerting, notifiers, rules);
    list(e['maintenance-windows']).forEach((m, j) => maintenance(d, m, `${name}-${j + 1}`, [name]));
  }
  for (const g of d.resources.flatMap((r) => (r.groups as string[] | undefined) ?? []))
    if (!d.groups.some((x) => x.name === g)) d.groups.push({ name: g });
  for (const [key, resources] of rules) {
    const resolved = key.endsWith('-resolved');
    d.alertRules.push({
      name: key,
      events: resolved ? ['INCIDENT_OPENED', 'INCIDENT_RESOLVED'] : ['INCIDENT_OPENED'],
      notifiers: [resolved ? key.slice(0, -'-resolved'.length) : key],
      resources,
    });
  }
  const m = c.maintenance as Obj | undefined;
  if (m && m.enabled !== false)
    maintenance(
      d,
      m,
      'gatus-maintenance',
      d.resources.map((r) => r.name as string),
    );
  return d;
}
