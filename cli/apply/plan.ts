import { createHash } from 'node:crypto';
import { MonctlError } from '../../src/errors.ts';
import { ops } from '../api/ops.ts';
import { allPages } from '../api/pages.ts';
import type { Runtime } from '../runtime.ts';
import { alertRuleSteps } from './alert-rules-plan.ts';
import { checkOptionsCreate, checkOptionsDiff } from './check-options-spec.ts';
import { httpCheckCreate, httpCheckDiff } from './http-check-plan.ts';
import { planMaintenance } from './maintenance.ts';
import { notifierSteps } from './notifiers-plan.ts';
import { pushDiff } from './push-spec.ts';
import type { AnnouncementSpec, Spec } from './spec.ts';
import type { Static } from '@sinclair/typebox';
import type { Announcement as AnnouncementView } from '../../src/api/schemas/announcements.ts';
import type { AdminResource as AdminResourceView } from '../../src/api/schemas/monitoring.ts';

type Announcement = Static<typeof AnnouncementView>;
type AdminResource = Static<typeof AdminResourceView>;
import { planStatusPages } from './status-pages.ts';
import { missingDependencies } from './resource-deps.ts';
import { tunnelSteps } from './routes-plan.ts';
import type { Step } from './step.ts';

const MARK = /^<div class="monctl-apply monctl-name-([A-Za-z0-9_-]+) monctl-hash-([0-9a-f]+)">/;

/**
 * The difference between the file and the daemon, as a list of steps.
 * Announcements have no name in the API: apply wraps their content in
 * `<div class="monctl-apply monctl-name-NAME monctl-hash-H">` (class survives
 * the sanitizer), H being a hash of the file's content, active and
 * activeUntil, so a change in the file is seen even though the daemon
 * rewrites the HTML.
 */
export async function makePlan(rt: Runtime, spec: Spec, prune: boolean): Promise<Step[]> {
  const c = rt.client;
  // Read once, page by page; alert rules resolve resource names through the ids this plan keeps.
  const listed = allPages<AdminResource>((path) => c.raw('GET', path), ops.listAdminResources.path);
  const resourceIds = new Map<string, number>();
  const [groups, resources, announcements, notifiers, alertRules, tunnel] = await Promise.all([
    c.call(ops.listGroups),
    listed,
    c.call(ops.listAnnouncements),
    notifierSteps(rt, spec.notifiers, prune),
    alertRuleSteps(rt, spec.alertRules, prune, { listed, idOf: (name) => resourceIds.get(name) }),
    tunnelSteps(rt, spec, prune),
  ]);
  const groupIds = new Map(groups.map((g) => [g.name, g.id]));
  const wanted = new Set(spec.groups.map((g) => g.name));
  const missing = spec.resources.flatMap((r) =>
    (r.groups ?? [])
      .filter((g) => !wanted.has(g) && !groupIds.has(g))
      .map((g) => `  resources ${r.name}: group "${g}" is neither in the file nor on the server`),
  );
  missing.push(
    ...spec.statusPages.flatMap((p) =>
      (p.groups ?? [])
        .filter((g) => !wanted.has(g) && !groupIds.has(g))
        .map((g) => `  statusPages ${p.slug}: group "${g}" is neither in the file nor on the server`),
    ),
  );
  if (prune)
    missing.push(
      ...spec.resources.flatMap((r) =>
        (r.groups ?? [])
          .filter((g) => !wanted.has(g))
          .map((g) => `  resources ${r.name}: group "${g}" would be pruned (add it to the file)`),
      ),
    );
  if (prune)
    missing.push(
      ...spec.statusPages.flatMap((p) =>
        (p.groups ?? [])
          .filter((g) => !wanted.has(g))
          .map((g) => `  statusPages ${p.slug}: group "${g}" would be pruned (add it to the file)`),
      ),
    );
  missing.push(...missingDependencies(spec.resources, new Set(resources.map((r) => r.name)), prune));
  // Locations name agents: on the server or in the file's agents section, before anything is written.
  if (spec.resources.some((r) => r.locations)) {
    const agents = new Set([...(await c.call(ops.listAgents)).flatMap((a) => [a.name, String(a.id)]), ...tunnel.agentNames]);
    missing.push(
      ...spec.resources.flatMap((r) =>
        (r.locations ?? [])
          .filter((l) => l !== 'daemon' && !agents.has(l))
          .map((l) => `  resources ${r.name}: location "${l}" is neither daemon nor an agent on the server`),
      ),
    );
  }
  if (missing.length)
    throw new MonctlError('invalid-file', `the file is invalid; nothing was changed:\n${[...new Set(missing)].join('\n')}`);
  const idsOf = (names: string[]) => names.map((n) => groupIds.get(n)!);
  for (const r of resources) resourceIds.set(r.name, r.id);
  // Agents first: routes' pools, resources' locations and alert rules name them.
  const steps: Step[] = [...tunnel.creates, ...tunnel.upserts];

  for (const g of spec.groups) {
    const cur = groups.find((x) => x.name === g.name);
    if (!cur) {
      steps.push({
        action: 'create',
        kind: 'group',
        name: g.name,
        run: async () => {
          const made = await c.call(ops.createGroup, { body: { name: g.name, visibility: g.visibility ?? 'PUBLIC' } });
          groupIds.set(made.name, made.id);
        },
      });
    } else if (g.visibility && g.visibility !== cur.visibility) {
      steps.push({
        action: 'update',
        kind: 'group',
        name: g.name,
        changes: ['visibility'],
        run: async () => {
          await c.call(ops.updateGroup, { params: { id: cur.id }, body: { name: g.name, visibility: g.visibility! } });
        },
      });
    }
  }

  const byName = new Map(resources.map((x) => [x.name, x]));
  for (const r of spec.resources) {
    const cur = byName.get(r.name);
    const optional = {
      intervalSeconds: r.intervalSeconds,
      skipTLS: r.skipTLS,
      recursive: r.recursive,
      active: r.active,
      failureThreshold: r.failureThreshold,
      successThreshold: r.successThreshold,
      quorum: r.quorum,
      severity: r.severity,
    };
    if (!cur) {
      const body = () => ({
        name: r.name,
        resourceType: r.type,
        ...(r.target === undefined ? {} : { target: r.target }),
        ...defined(optional),
        ...r.push,
        ...(r.groups ? { groupIds: idsOf(r.groups) } : {}),
        ...(r.locations ? { locations: r.locations } : {}),
        ...(r.conditions ? { conditions: r.conditions } : {}),
        ...(r.dependsOn ? { dependsOn: r.dependsOn } : {}),
        ...httpCheckCreate(r.http),
        ...checkOptionsCreate(r.options),
      });
      const done = (made: { id: number; name: string }) => void resourceIds.set(made.name, made.id);
      steps.push({
        action: 'create',
        kind: 'resource',
        name: r.name,
        batch: { item: () => ({ op: 'create', resource: body() }), done },
      });
      continue;
    }
    const changes: string[] = [];
    if (r.type !== cur.resourceType) changes.push('type');
    // A push check's target is its slug, made from the name when the file leaves it out.
    if (r.target !== undefined && r.target !== cur.target) changes.push('target');
    for (const [k, v] of Object.entries(optional)) if (v !== undefined && v !== (cur as Record<string, unknown>)[k]) changes.push(k);
    const sorted = (names: string[]) => [...names].sort().join('\n');
    if (r.groups && sorted(r.groups) !== sorted(cur.groups.map((g) => g.name))) changes.push('groups');
    // In order: the first location is the one a check now reports.
    if (r.locations && r.locations.join('\n') !== (cur.locations ?? ['daemon']).join('\n')) changes.push('locations');
    // In order too: the first that fails is the one the check's message names.
    if (r.conditions && JSON.stringify(r.conditions) !== JSON.stringify(cur.conditions ?? [])) changes.push('conditions');
    if (r.dependsOn && sorted(r.dependsOn) !== sorted((cur.dependsOn ?? []).map((d) => d.name))) changes.push('dependsOn');
    const http = httpCheckDiff(r.http, cur);
    const push = pushDiff(r.push, cur.push);
    const options = checkOptionsDiff(r.options, cur, r.type !== cur.resourceType);
    const shown = [...changes, ...http.changes, ...push.changes, ...options.changes];
    const patch = () => {
      const body: Record<string, unknown> = { ...http.patch, ...push.patch, ...options.patch };
      for (const k of changes) {
        if (k === 'type') body.resourceType = r.type;
        else if (k === 'groups') body.groupIds = idsOf(r.groups!);
        else body[k] = (r as unknown as Record<string, unknown>)[k];
      }
      return body;
    };
    if (shown.length || http.secrets) {
      steps.push({
        action: 'update',
        kind: 'resource',
        name: r.name,
        changes: http.secrets ? [...shown, 'secrets sent'] : shown,
        // Secrets alone are sent, not shown as a change: reads never return them to compare.
        secretsOnly: shown.length === 0,
        batch: { item: () => ({ op: 'update', id: cur.id, patch: patch() }) },
      });
    }
  }

  const managed = new Map(
    announcements.flatMap((a) => {
      const m = MARK.exec(a.content);
      return m ? [[m[1], { a, hash: m[2] }] as const] : [];
    }),
  );
  for (const a of spec.announcements) {
    const hash = createHash('sha256')
      .update(JSON.stringify([a.content, a.active, a.activeUntil]))
      .digest('hex')
      .slice(0, 16);
    const body = {
      kind: a.kind,
      active: a.active,
      activeUntil: a.activeUntil,
      content: `<div class="monctl-apply monctl-name-${a.name} monctl-hash-${hash}">${a.content}</div>`,
    };
    const cur = managed.get(a.name) ?? unmarked(announcements, a.name);
    if (!cur) {
      steps.push({
        action: 'create',
        kind: 'announcement',
        name: a.name,
        run: async () => void (await c.call(ops.createAnnouncement, { body })),
      });
    } else if ((cur.hash !== hash && !sameAnnouncement(a, cur.a)) || cur.a.kind !== a.kind) {
      const changes = [
        ...(cur.a.kind !== a.kind ? ['kind'] : []),
        ...(cur.hash !== hash && !sameAnnouncement(a, cur.a) ? ['content'] : []),
      ];
      steps.push({
        action: 'update',
        kind: 'announcement',
        name: a.name,
        changes,
        run: async () => void (await c.call(ops.replaceAnnouncement, { params: { id: cur.a.id }, body })),
      });
    }
  }

  steps.push(...notifiers.upserts);
  // After the notifiers, groups and resources they name; before any deletion, which a rule naming it would refuse.
  steps.push(...alertRules.upserts);
  const windows = await planMaintenance(
    rt,
    spec.maintenance,
    prune && spec.managesMaintenance,
    { resources: resourceIds, groups: groupIds },
    { resources: new Set(spec.resources.map((r) => r.name)), groups: wanted, agents: new Set(spec.agents.map((a) => a.name)) },
  );
  steps.push(...windows.steps);
  steps.push(...(await planStatusPages(c, spec.statusPages, groupIds, prune)));

  if (prune) {
    // Rules and windows first: they name notifiers, resources and groups that may go next.
    steps.push(...alertRules.deletions);
    steps.push(...windows.deletions);
    steps.push(...notifiers.deletions);
    const names = (list: { name: string }[]) => new Set(list.map((x) => x.name));
    const keepR = names(spec.resources);
    for (const r of resources)
      if (!keepR.has(r.name))
        steps.push({
          action: 'delete',
          kind: 'resource',
          name: r.name,
          batch: { item: () => ({ op: 'delete', id: r.id }) },
        });
    const keepA = names(spec.announcements);
    // Only announcements that apply itself created are pruned.
    for (const [name, { a }] of managed)
      if (!keepA.has(name))
        steps.push({
          action: 'delete',
          kind: 'announcement',
          name,
          run: async () => void (await c.call(ops.deleteAnnouncement, { params: { id: a.id } })),
        });
    for (const g of groups)
      if (!wanted.has(g.name))
        steps.push({
          action: 'delete',
          kind: 'group',
          name: g.name,
          run: async () => void (await c.call(ops.deleteGroup, { params: { id: g.id } })),
        });
    // Routes, then agents: an agent's deletion takes the routes it served alone.
    steps.push(...tunnel.deletions);
  }
  return steps;
}

/**
 * `announcement-ID` in a file (as `monctl export` names one that apply did not create): that
 * announcement, so the file takes it over instead of adding a copy.
 */
function unmarked(list: Announcement[], name: string): { a: Announcement; hash: string } | undefined {
  const id = /^announcement-(\d+)$/.exec(name)?.[1];
  const a = id === undefined ? undefined : list.find((x) => x.id === Number(id) && !MARK.test(x.content));
  return a && { a, hash: '' };
}

/**
 * The file's announcement says what the daemon shows (an export of it): same content inside the
 * wrapper, same state and end. The hash alone misses this when the file was written from the
 * daemon's forms (its sanitized HTML, its way of writing a date).
 */
function sameAnnouncement(a: AnnouncementSpec, cur: Announcement): boolean {
  const inner = /^<div class="monctl-apply[^"]*">([\s\S]*)<\/div>$/.exec(cur.content)?.[1] ?? cur.content;
  const instant = (t: string | null) => (t === null ? null : Date.parse(t));
  return inner === a.content && a.active === cur.active && instant(a.activeUntil) === instant(cur.activeUntil);
}

function defined<T extends Record<string, unknown>>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
