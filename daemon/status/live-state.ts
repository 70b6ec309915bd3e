import type { Selectable } from 'kysely';
import type { CurrentStatus, ResourceType, Visibility } from '../../src/api/schemas/monitoring.ts';
import type { OverallState } from '../../src/api/schemas/status-pages.ts';
import type { DaemonContext } from '../context.ts';
import { effectiveStatus } from '../probes/results.ts';
import type { StatusPagesTable } from '../store/schema.ts';
import { parseIds } from './json-ids.ts';
import { maintenanceTest, pageMaintenance, type WindowOccurrence } from './maintenance-read.ts';
import { overallOf } from './overall.ts';

export type PageRow = Selectable<StatusPagesTable>;
/** The two views of a page: anonymous visitors, and logged-in ones (sessions and API keys, ADMIN included). */
export type Audience = 'anonymous' | 'user';
export const AUDIENCES: readonly Audience[] = ['anonymous', 'user'];

const LEVELS: Record<Audience, Visibility[]> = { anonymous: ['PUBLIC'], user: ['PUBLIC', 'AUTHENTICATED'] };
/** Upcoming maintenance: windows starting within this horizon. */
export const UPCOMING_MS = 7 * 86_400_000;

export interface LiveResource {
  id: number;
  name: string;
  resourceType: ResourceType;
  currentStatus: CurrentStatus;
  inMaintenance: boolean;
  down: boolean;
}

/** What a page shows that changes with checks, incidents and maintenance: the part the live stream follows. */
export interface LiveState {
  groups: Array<{ id: number; name: string; resources: LiveResource[] }>;
  overall: { state: OverallState; label: string };
  /** Occurrences on now or upcoming that cover a shown resource, with only the shown resources. */
  windows: WindowOccurrence[];
  now: number;
}

/** The names of the resources shown, by id: what posted incidents may name to this audience. */
export function shownNames(live: Pick<LiveState, 'groups'>): Map<number, string> {
  const names = new Map<number, string>();
  for (const g of live.groups) for (const r of g.resources) names.set(r.id, r.name);
  return names;
}

/** The status a resource shows on the page, as a CSS class and a label. */
export function shownStatus(r: Pick<LiveResource, 'currentStatus' | 'inMaintenance'>): { key: string; label: string } {
  if (r.inMaintenance) return { key: 'maint', label: 'Maintenance' };
  switch (r.currentStatus) {
    case 'available':
      return { key: 'up', label: 'Operational' };
    case 'not_available':
      return { key: 'down', label: 'Down' };
    case 'inactive':
      return { key: 'off', label: 'Paused' };
    default:
      return { key: 'unknown', label: 'Unknown' };
  }
}

/**
 * The groups the audience may see (in the page's order, else by name) and
 * their active resources the audience may see (the seed's rules: the most
 * permissive group of a resource decides; HIDDEN never shows), with their
 * current status, maintenance (the alerts capability's windows) and open
 * incidents. Four small queries.
 */
export async function readLiveState(ctx: DaemonContext, page: PageRow, audience: Audience, now = Date.now()): Promise<LiveState> {
  const wanted = parseIds(page.group_ids);
  const levels = LEVELS[audience];
  let groupQuery = ctx.db.selectFrom('groups').select(['id', 'name', 'visibility']).where('visibility', 'in', levels);
  if (wanted.length) groupQuery = groupQuery.where('id', 'in', wanted);
  const groupRows = await groupQuery.orderBy('name').orderBy('id').execute();
  if (wanted.length) groupRows.sort((a, b) => wanted.indexOf(a.id) - wanted.indexOf(b.id));
  const shownGroups = groupRows.map((g) => g.id);
  if (shownGroups.length === 0) return { groups: [], overall: overallOf([]), windows: [], now };

  const members = ctx.db.selectFrom('resource_groups').select('resource_id').where('group_id', 'in', shownGroups);
  const [resources, memberships, open] = await Promise.all([
    ctx.db
      .selectFrom('resources')
      .select(['id', 'name', 'resource_type', 'current_status', 'active'])
      .where('active', '=', 1)
      .where('id', 'in', members)
      .orderBy('name')
      .orderBy('id')
      .execute(),
    ctx.db
      .selectFrom('resource_groups')
      .select(['resource_id as resourceId', 'group_id as groupId'])
      .where('group_id', 'in', shownGroups)
      .execute(),
    ctx.db
      .selectFrom('incidents')
      .select('resource_id')
      .where('resolved_at', 'is', null)
      .where('subject_type', '=', 'resource')
      .where('resource_id', 'in', members)
      .execute(),
  ]);
  const sectionsOf = new Map<number, number[]>();
  for (const m of memberships) sectionsOf.set(m.resourceId, [...(sectionsOf.get(m.resourceId) ?? []), m.groupId]);
  const down = new Set(open.map((o) => Number(o.resource_id)));
  const sections = new Map<number, LiveResource[]>(shownGroups.map((id) => [id, []]));
  // Every resource here is in a group the audience may see, so the seed's rule (the most permissive group
  // decides) shows it; under a HIDDEN group too, it appears only in the sections of its visible groups.
  const shown: number[] = [];
  const inMaintenance = maintenanceTest(ctx, now);
  for (const row of resources) {
    const maintenance = inMaintenance(row.id);
    const resource: LiveResource = {
      id: row.id,
      name: row.name,
      resourceType: row.resource_type as ResourceType,
      currentStatus: effectiveStatus(row.active, row.current_status),
      inMaintenance: maintenance,
      down: down.has(row.id) && !maintenance,
    };
    shown.push(row.id);
    for (const id of sectionsOf.get(row.id) ?? []) sections.get(id)?.push(resource);
  }
  const groups = groupRows.map((g) => ({ id: g.id, name: g.name, resources: sections.get(g.id)! }));
  const windows = await pageMaintenance(ctx, shown, now, UPCOMING_MS);
  return { groups, overall: overallOf(groups), windows, now };
}
