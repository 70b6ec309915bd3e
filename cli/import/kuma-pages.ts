import { addGroup, type Draft, slug } from './draft.ts';

/**
 * Kuma's maintenance and status pages. Its 1.x JSON backup never carried them (only
 * `notificationList`, `proxyList` and `monitorList`); a backup that has `maintenanceList` or
 * `statusPageList` beside them (as Kuma's API serialises them: Maintenance.toJSON, StatusPage.toJSON
 * with its `publicGroupList`) gets them mapped too.
 */
type Obj = Record<string, unknown>;
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT', 'SUN'];
const hhmm = (t: unknown): string | undefined => {
  const o = t as { hours?: number; minutes?: number } | undefined;
  if (!o || typeof o.hours !== 'number') return undefined;
  return `${String(o.hours).padStart(2, '0')}:${String(o.minutes ?? 0).padStart(2, '0')}`;
};
const minutesOf = (t: string) => Number(t.slice(0, 2)) * 60 + Number(t.slice(3));

/** A window's targets: the resources made from its monitors. */
function targets(m: Obj, names: Map<number, string>): string[] {
  const list = Array.isArray(m.monitorList) ? (m.monitorList as Obj[]) : [];
  return list.map((x) => names.get(Number(x.id))).filter((n): n is string => n !== undefined);
}

export function mapMaintenance(d: Draft, m: Obj, names: Map<number, string>): void {
  const who = `maintenance ${m.id} "${m.title}" (${m.strategy})`;
  const resources = targets(m, names);
  if (resources.length === 0) return void d.report.push(`${who}: it covers no monitor that was imported`);
  const zone = typeof m.timezone === 'string' && m.timezone !== 'SAME_AS_SERVER' ? m.timezone : 'UTC';
  const name = String(m.title);
  if (m.strategy === 'single') {
    const range = Array.isArray(m.dateRange) ? (m.dateRange as string[]) : [];
    const offset = typeof m.timezoneOffset === 'string' ? m.timezoneOffset : 'Z';
    if (!range[0] || !range[1]) return void d.report.push(`${who}: no start and end`);
    const at = (s: string) => `${s.trim().replace(' ', 'T').slice(0, 16)}:00${offset}`;
    d.maintenance.push({ name, startsAt: at(range[0]), endsAt: at(range[1]), resources });
  } else if (m.strategy === 'recurring-weekday') {
    const range = Array.isArray(m.timeRange) ? m.timeRange : [];
    const start = hhmm(range[0]);
    const end = hhmm(range[1]);
    const days = [...new Set((Array.isArray(m.weekdays) ? m.weekdays : []).map((n) => DAYS[Number(n)]).filter(Boolean))];
    if (!start || !end || days.length === 0) return void d.report.push(`${who}: no days or times`);
    const duration = (minutesOf(end) - minutesOf(start) + 1440) % 1440 || 1440;
    d.maintenance.push({ name, days, startTime: start, durationMinutes: duration, timeZone: zone, resources });
  } else d.report.push(`${who}: monctl's windows are one-off or weekly`);
}

/** A status page; each of its public groups becomes a group holding that group's monitors. */
export function mapStatusPage(d: Draft, p: Obj, names: Map<number, string>): void {
  const who = `status page ${p.id} "${p.slug}"`;
  const groups: string[] = [];
  for (const g of Array.isArray(p.publicGroupList) ? (p.publicGroupList as Obj[]) : []) {
    const group = addGroup(d, String(g.name));
    groups.push(group);
    for (const name of targets(g, names)) {
      const r = d.resources.find((x) => x.name === name)!;
      r.groups = [...new Set([...((r.groups as string[]) ?? []), group])];
    }
  }
  const hosts = Array.isArray(p.domainNameList) ? (p.domainNameList as string[]) : [];
  if (hosts.length > 1) d.report.push(`${who}: domains ${hosts.slice(1).join(', ')} left out: a page has one custom host name`);
  if (typeof p.customCSS === 'string' && p.customCSS.trim())
    d.report.push(`${who}: custom CSS left out: monctl pages take branding, not CSS`);
  d.statusPages.push({
    slug: slug(String(p.slug)),
    title: String(p.title),
    ...(typeof p.description === 'string' && p.description ? { description: p.description } : {}),
    ...(typeof p.footerText === 'string' && p.footerText ? { footer: p.footerText } : {}),
    ...(hosts[0] ? { customHostname: hosts[0] } : {}),
    groups,
  });
}
