import type { Kysely, Transaction } from 'kysely';
import type { LocationResult } from '../../src/api/schemas/monitoring.ts';
import { invalidField } from '../../src/errors.ts';
import { formatNullable } from '../../src/time.ts';
import { DAEMON, DAEMON_LOCATION, type Location } from './locations.ts';
import type { Database, ResourceRow } from '../store/schema.ts';
import { timingOf } from './check-timing.ts';

type Db = Kysely<Database> | Transaction<Database>;

/** Rows per `IN (…)` list. */
const CHUNK = 500;
/** At most this many locations per resource. */
export const MAX_LOCATIONS = 16;

/**
 * Where each resource is checked (docs/API.md#check-locations), in order: the daemon or agents
 * by id and name. A resource without location rows is checked by the daemon
 * alone. `ids` undefined: every resource with rows.
 */
export async function locationsOf(db: Db, ids?: readonly number[]): Promise<Map<number, Location[]>> {
  const out = new Map<number, Location[]>();
  const parts: Array<readonly number[] | undefined> = ids === undefined ? [undefined] : [];
  if (ids) for (let i = 0; i < ids.length; i += CHUNK) parts.push(ids.slice(i, i + CHUNK));
  for (const part of parts) {
    let query = db
      .selectFrom('resource_locations as l')
      .leftJoin('agents as a', 'a.id', 'l.agent_id')
      .select(['l.resource_id', 'l.agent_id', 'a.name']);
    if (part) {
      if (part.length === 0) continue;
      query = query.where('l.resource_id', 'in', part);
    }
    for (const row of await query.orderBy('l.resource_id').orderBy('l.position').execute()) {
      const list = out.get(row.resource_id) ?? [];
      list.push(row.agent_id === null ? DAEMON_LOCATION : { agentId: Number(row.agent_id), name: row.name ?? `agent ${row.agent_id}` });
      out.set(row.resource_id, list);
    }
  }
  return out;
}

/** The locations of one resource (the daemon alone when it has none stored). */
export async function locationsOfOne(db: Db, id: number): Promise<Location[]> {
  return (await locationsOf(db, [id])).get(id) ?? [DAEMON_LOCATION];
}

/**
 * The API's `locations`: `daemon`, agent names, or agent ids (a number, or a
 * string of digits that names no agent), resolved to locations. 400 naming
 * `locations` for an unknown agent or a location given twice. `daemon` always
 * means the daemon: an agent that happens to be named so is given by its id.
 */
export async function resolveLocations(db: Db, refs: ReadonlyArray<string | number>): Promise<Location[]> {
  if (refs.length === 0) throw invalidField('locations', 'give at least one location (daemon, or an agent name or id)');
  if (refs.length > MAX_LOCATIONS) throw invalidField('locations', `at most ${MAX_LOCATIONS} locations`);
  const agents = await db.selectFrom('agents').select(['id', 'name']).execute();
  const byName = new Map(agents.map((a) => [a.name, Number(a.id)]));
  const nameOf = new Map(agents.map((a) => [Number(a.id), a.name]));
  const out: Location[] = [];
  const seen = new Set<number>();
  for (const ref of refs) {
    let location: Location | undefined;
    if (ref === DAEMON) location = DAEMON_LOCATION;
    else if (typeof ref === 'string' && byName.has(ref)) location = { agentId: byName.get(ref)!, name: ref };
    else if (typeof ref === 'number' || /^\d{1,15}$/.test(ref)) {
      const id = Number(ref);
      if (nameOf.has(id)) location = { agentId: id, name: nameOf.get(id)! };
    }
    if (!location) throw invalidField('locations', `no agent named or numbered "${ref}" (locations are daemon, agent names or agent ids)`);
    if (seen.has(location.agentId)) throw invalidField('locations', `${location.name} is listed twice`);
    seen.add(location.agentId);
    out.push(location);
  }
  return out;
}

export const isDaemonOnly = (locations: readonly Location[]) => locations.length === 1 && locations[0].agentId === 0;

/** Same locations, same order. */
export const sameLocations = (a: readonly Location[], b: readonly Location[]) =>
  a.length === b.length && a.every((l, i) => l.agentId === b[i].agentId);

/**
 * Replaces a resource's locations; the daemon alone is stored as no rows.
 * Results of locations it no longer has are dropped.
 */
export async function setLocations(db: Db, resourceId: number, locations: readonly Location[]): Promise<void> {
  await db.deleteFrom('resource_locations').where('resource_id', '=', resourceId).execute();
  if (!isDaemonOnly(locations)) {
    await db
      .insertInto('resource_locations')
      .values(
        locations.map((l, position) => ({
          resource_id: resourceId,
          position,
          agent_id: l.agentId === 0 ? null : l.agentId,
        })),
      )
      .execute();
  }
  const kept = isDaemonOnly(locations) ? [] : locations.map((l) => l.agentId);
  let stale = db.deleteFrom('location_results').where('resource_id', '=', resourceId);
  if (kept.length) stale = stale.where('agent_id', 'not in', kept);
  await stale.execute();
}

/** How `locations` reads in the API: names in order (`daemon`; an agent named `daemon` by its id). */
export function locationNames(locations: readonly Location[]): string[] {
  return locations.map((l) => (l.agentId !== 0 && l.name === DAEMON ? String(l.agentId) : l.name));
}

/**
 * The latest result per location for the detail: from `location_results`, or
 * the resource's own latest-check columns when the daemon checks it alone.
 * A location that has not checked yet reads `unknown` with no time.
 */
export async function locationResults(db: Db, row: ResourceRow, locations: readonly Location[]): Promise<LocationResult[]> {
  if (isDaemonOnly(locations)) {
    const status =
      row.latest_checked_at === null
        ? 'unknown'
        : row.current_status === 'available' || row.current_status === 'not_available'
          ? row.current_status
          : 'unknown';
    return [
      {
        location: DAEMON,
        agentId: null,
        status,
        message: row.latest_message,
        errorCode: row.latest_error_code,
        checkedAt: formatNullable(row.latest_checked_at),
        durationMs: row.latest_duration_ms === null ? null : Number(row.latest_duration_ms),
        timing: timingOf(row.latest_timing),
      },
    ];
  }
  const rows = await db.selectFrom('location_results').selectAll().where('resource_id', '=', row.id).execute();
  const byAgent = new Map(rows.map((r) => [Number(r.agent_id), r]));
  const names = locationNames(locations);
  return locations.map((l, i) => {
    const r = byAgent.get(l.agentId);
    const status = r && (r.status === 'available' || r.status === 'not_available') ? r.status : 'unknown';
    return {
      location: names[i],
      agentId: l.agentId === 0 ? null : l.agentId,
      status,
      message: r ? r.message : 'no check yet',
      errorCode: r?.error_code ?? null,
      checkedAt: formatNullable(r ? Number(r.checked_at) : null),
      durationMs: r ? Number(r.duration_ms) : null,
      timing: timingOf(r?.timing),
    };
  });
}
