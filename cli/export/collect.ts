import { ops } from '../api/ops.ts';
import type { CliClient } from '../api/client.ts';
import { announcementEntry } from './announcements.ts';
import { notifierEntry } from './notifiers.ts';
import { resourceEntry } from './resources.ts';
import { routeEntry } from './routes.ts';
import { Placeholders } from './secrets.ts';

type Obj = Record<string, unknown>;
type Named = { id: number; name: string };

const order = <T>(list: T[], key: (x: T) => string) => [...list].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
const byName = <T extends { name: string }>(list: T[]) => order(list, (x) => x.name);

/**
 * Everything `apply -f` takes, read from the daemon and written in the file's format, each
 * section sorted by name (status pages by slug) and each entry's keys in a fixed order, so that two
 * exports compare line by line. Ids become names; secrets become `${ENV}` placeholders (`env`).
 */
export async function collectSpec(c: CliClient): Promise<{ doc: Obj; env: Placeholders }> {
  const [groups, resources, announcements, notifiers, rules, windows, pages, agents, routes] = await Promise.all([
    c.call(ops.listGroups),
    c.call(ops.listAdminResources),
    c.call(ops.listAnnouncements),
    c.call(ops.listNotifiers),
    c.call(ops.listAlertRules),
    c.call(ops.listMaintenanceWindows),
    c.call(ops.listStatusPages),
    c.call(ops.listAgents),
    c.call(ops.listRoutes),
  ]);
  const env = new Placeholders();
  const nameOf = (list: Named[]) => {
    const map = new Map(list.map((x) => [x.id, x.name]));
    return (ids: number[]) => ids.map((id) => map.get(id) ?? `#${id}`);
  };
  const sorted = (names: string[]) => order(names, (x) => x);
  const names = { notifiers: nameOf(notifiers), resources: nameOf(resources), groups: nameOf(groups), agents: nameOf(agents) };
  const targets = (w: { resourceIds: number[]; groupIds: number[]; agentIds: number[] }) => ({
    ...(w.resourceIds.length ? { resources: sorted(names.resources(w.resourceIds)) } : {}),
    ...(w.groupIds.length ? { groups: sorted(names.groups(w.groupIds)) } : {}),
    ...(w.agentIds.length ? { agents: sorted(names.agents(w.agentIds)) } : {}),
  });
  const doc: Obj = {
    groups: byName(groups).map((g) => ({ name: g.name, visibility: g.visibility })),
    resources: byName(resources).map((r) => resourceEntry(r, env)),
    announcements: order(
      announcements.map((a) => announcementEntry(a)),
      (a) => a.name,
    ),
    notifiers: byName(notifiers).map((n) => notifierEntry(n, env)),
    alertRules: byName(rules).map((r) => ({
      name: r.name,
      enabled: r.enabled,
      events: sorted(r.events),
      notifiers: sorted(names.notifiers(r.notifierIds)),
      ...targets(r),
      severities: sorted(r.severities),
      severityOverride: r.severityOverride,
      groupWaitSeconds: r.groupWaitSeconds,
      repeatIntervalMinutes: r.repeatIntervalMinutes,
    })),
    maintenance: byName(windows).map((w) => ({
      name: w.name,
      kind: w.kind,
      ...(w.kind === 'ONE_OFF'
        ? { startsAt: w.startsAt, endsAt: w.endsAt }
        : { days: w.days, startTime: w.startTime, durationMinutes: w.durationMinutes, timeZone: w.timeZone }),
      ...targets(w),
    })),
    statusPages: order(pages, (p) => p.slug).map((p) => ({
      slug: p.slug,
      title: p.title,
      description: p.description,
      groups: names.groups(p.groupIds),
      showAnnouncements: p.showAnnouncements,
      showIncidents: p.showIncidents,
      showErrorDetails: p.showErrorDetails,
      customHostname: p.customHostname,
      httpsRedirect: p.httpsRedirect,
      footer: p.footer,
      subscriptions: p.subscriptions,
      emailNotifier: p.emailNotifierId === null ? null : (names.notifiers([p.emailNotifierId])[0] ?? null),
    })),
    agents: byName(agents).map((a) => ({ name: a.name })),
    routes: byName(routes).map((r) => routeEntry(r, new Map(agents.map((a) => [a.id, a.name])), env)),
  };
  return { doc, env };
}
