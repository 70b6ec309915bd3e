import { ExitCode, MonctlError } from '../../src/errors.ts';
import { addGroup, type Draft, newDraft } from './draft.ts';
import { type KumaMonitor, mapMonitor } from './kuma-monitors.ts';
import { type KumaNotification, mapNotification } from './kuma-notifiers.ts';
import { mapMaintenance, mapStatusPage } from './kuma-pages.ts';

type Obj = Record<string, unknown>;

/**
 * Uptime Kuma's JSON backup (Settings → Backup → Export, 1.x: `{version, notificationList,
 * monitorList}`) as an apply file. Group monitors and tags become groups; each notification a
 * monitor uses becomes an alert rule sending that monitor's incidents (and certificate expiry, when
 * the monitor notifies it) to its notifier.
 */
export function importKuma(backup: unknown): Draft {
  if (typeof backup !== 'object' || backup === null || !Array.isArray((backup as Obj).monitorList))
    throw new MonctlError(
      'invalid-file',
      "not an Uptime Kuma backup: it has no monitorList (export it from Kuma's Settings → Backup)",
      ExitCode.usage,
    );
  const b = backup as {
    monitorList: KumaMonitor[];
    notificationList?: KumaNotification[];
    maintenanceList?: Obj[];
    statusPageList?: Obj[];
  };
  const d = newDraft();
  const byId = new Map(b.monitorList.map((m) => [m.id, m]));
  const groupsOf = (m: KumaMonitor): string[] => {
    const out: string[] = [];
    for (let p = byId.get(Number(m.parent)); p && !out.includes(p.name); p = byId.get(Number(p.parent))) out.push(p.name);
    for (const t of Array.isArray(m.tags) ? (m.tags as Obj[]) : []) out.push(t.value ? `${t.name}:${t.value}` : String(t.name));
    return [...new Set(out)];
  };
  const names = new Map<number, string>();
  for (const m of b.monitorList) {
    if (m.type === 'group') {
      addGroup(d, m.name);
      continue;
    }
    const taken = d.resources.some((r) => r.name === m.name);
    const r = mapMonitor(d, taken ? { ...m, name: `${m.name} (${m.id})` } : m, groupsOf);
    if (!r) continue;
    d.resources.push(r);
    names.set(m.id, r.name as string);
  }
  const notifierOf = new Map<number, string>();
  const taken = new Set<string>();
  for (const n of b.notificationList ?? []) {
    const mapped = mapNotification(d, n, taken);
    if (!mapped) continue;
    d.notifiers.push(mapped);
    notifierOf.set(n.id, mapped.name as string);
  }
  const uses = (m: KumaMonitor, id: number) => Boolean((m.notificationIDList as Obj | undefined)?.[id]);
  for (const [id, notifier] of notifierOf) {
    const monitors = b.monitorList.filter((m) => names.has(m.id) && uses(m, id));
    // A group monitor notifies for its children: the rule names the group.
    const groups = b.monitorList.filter((m) => m.type === 'group' && uses(m, id)).map((m) => m.name);
    if (monitors.length + groups.length === 0) continue;
    const events = ['INCIDENT_OPENED', 'INCIDENT_RESOLVED'];
    if (monitors.some((m) => m.expiryNotification === true)) events.push('CERT_EXPIRING');
    d.alertRules.push({
      name: `kuma-${notifier}`,
      events,
      notifiers: [notifier],
      ...(monitors.length ? { resources: monitors.map((m) => names.get(m.id)!) } : {}),
      ...(groups.length ? { groups } : {}),
    });
  }
  for (const m of b.maintenanceList ?? []) mapMaintenance(d, m, names);
  for (const p of b.statusPageList ?? []) mapStatusPage(d, p, names);
  return d;
}
