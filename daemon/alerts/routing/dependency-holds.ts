import type { Kysely, Transaction } from 'kysely';
import { dependencyEdges } from '../../monitoring/dependencies.ts';
import { shapedChunks } from '../../store/batches.ts';
import type { Database } from '../../store/schema.ts';
import { enqueueAlertEvent } from '../alert-events.ts';
import type { AlertEventPayload } from '../types.ts';
import type { Hold } from './inhibition.ts';

type Db = Kysely<Database> | Transaction<Database>;
const chunked = <T>(items: readonly T[]) => shapedChunks(items, 256);

/** How far a chain of dependencies is followed (api -> cache -> db -> disk): longer ones are rare, and the walk stays bounded. */
const MAX_DEPTH = 4;
/** The payload key (true) of a dependent's opening written again when a dependency recovered. */
export const AFTER_DEPENDENCY_KEY = 'afterDependency';

type EventRow = {
  id: number;
  kind: string;
  resource_id: number | null;
  incident_id: number | null;
  suppressed: string | null;
  created_at: number;
  payload: string;
};

/**
 * Holds by event id for resources' dependencies (docs/API.md#dependencies):
 * - INCIDENT_OPENED while a dependency (or theirs, MAX_DEPTH deep) has an open incident:
 *   inhibited; while one is failing towards one: deferred, since it may open (a dependent
 *   that fails a moment before its database is then inhibited) or recover.
 * - An opening written again after a dependency recovered: deferred until the resource has been
 *   checked since, inhibited when its incident resolved meanwhile (it recovered with the dependency).
 * - INCIDENT_RESOLVED of an incident whose every opening was inhibited: inhibited too (it would
 *   reach nobody anyway: a resolution goes where the opening went).
 */
export async function dependencyHolds(db: Db, events: readonly EventRow[]): Promise<Map<number, Hold>> {
  const holds = new Map<number, Hold>();
  const openings = events.filter((e) => e.kind === 'INCIDENT_OPENED' && e.resource_id !== null && e.suppressed === null);
  const closings = events.filter((e) => e.kind === 'INCIDENT_RESOLVED' && e.incident_id !== null && e.suppressed === null);
  const held = await heldBy(db, [...new Set(openings.map((e) => e.resource_id!))]);
  const again = openings.filter((e) => e.payload.includes(`"${AFTER_DEPENDENCY_KEY}"`));
  const state = new Map<number, { open: number | null; checkedAt: number }>();
  for (const part of chunked([...new Set(again.map((e) => e.resource_id!))])) {
    const rows = await db.selectFrom('resources').select(['id', 'open_incident_id', 'latest_checked_at']).where('id', 'in', part).execute();
    for (const r of rows)
      state.set(Number(r.id), {
        open: r.open_incident_id === null ? null : Number(r.open_incident_id),
        checkedAt: Number(r.latest_checked_at ?? 0),
      });
  }
  for (const e of openings) {
    let hold = held.get(e.resource_id!);
    const s = again.includes(e) ? state.get(e.resource_id!) : undefined;
    if (again.includes(e) && s?.open !== e.incident_id) hold = 'inhibit';
    else if (s && hold !== 'inhibit' && s.checkedAt <= e.created_at) hold = 'defer';
    if (hold) holds.set(e.id, hold);
  }
  // Openings inhibited in this very pass count as inhibited: a copy and its resolution often come together.
  const inhibitedNow = new Set(openings.filter((e) => holds.get(e.id) === 'inhibit').map((e) => e.id));
  const silenced = await silencedIncidents(
    db,
    closings.map((e) => e.incident_id!),
    inhibitedNow,
  );
  for (const e of closings) if (silenced.has(e.incident_id!)) holds.set(e.id, 'inhibit');
  return holds;
}

/** Per resource: 'inhibit' when a dependency up the chain has an open incident, 'defer' when one is failing. */
async function heldBy(db: Db, ids: number[]): Promise<Map<number, Hold>> {
  const out = new Map<number, Hold>();
  const reached = new Map<number, Set<number>>(); // dependency -> the resources that depend on it
  let frontier = new Map<number, Set<number>>(ids.map((id) => [id, new Set([id])]));
  for (let depth = 0; depth < MAX_DEPTH && frontier.size > 0; depth++) {
    const next = new Map<number, Set<number>>();
    for (const { from, to: dep } of await dependencyEdges(db, [...frontier.keys()])) {
      const seen = reached.get(dep) ?? new Set<number>();
      for (const origin of frontier.get(from) ?? []) {
        if (origin === dep || seen.has(origin)) continue;
        seen.add(origin);
        next.set(dep, (next.get(dep) ?? new Set<number>()).add(origin));
      }
      reached.set(dep, seen);
    }
    frontier = next;
  }
  for (const part of chunked([...reached.keys()])) {
    const rows = await db
      .selectFrom('resources')
      .select(['id', 'open_incident_id', 'fail_streak'])
      .where('id', 'in', part)
      .where('active', '=', 1)
      .execute();
    for (const row of rows) {
      const hold: Hold = row.open_incident_id !== null ? 'inhibit' : Number(row.fail_streak) > 0 ? 'defer' : undefined;
      if (!hold) continue;
      for (const origin of reached.get(Number(row.id)) ?? []) if (out.get(origin) !== 'inhibit') out.set(origin, hold);
    }
  }
  return out;
}

/** Incidents whose every INCIDENT_OPENED was inhibited (none waits to be routed again). */
async function silencedIncidents(db: Db, incidentIds: number[], inhibitedNow = new Set<number>()): Promise<Set<number>> {
  const out = new Set<number>();
  for (const part of chunked([...new Set(incidentIds)])) {
    const rows = await db
      .selectFrom('alert_events')
      .select(['id', 'incident_id', 'suppressed'])
      .where('incident_id', 'in', part)
      .where('kind', '=', 'INCIDENT_OPENED')
      .execute();
    const loud = new Set(rows.filter((r) => r.suppressed !== 'inhibited' && !inhibitedNow.has(r.id)).map((r) => r.incident_id));
    for (const r of rows) if (!loud.has(r.incident_id)) out.add(r.incident_id!);
  }
  return out;
}

/**
 * In the router's transaction, for dependencies whose INCIDENT_RESOLVED it routes: each active
 * dependent still in an incident whose openings were all inhibited gets its opening written
 * again, so that one still down is alerted then (dependencyHolds waits for its next check).
 */
export async function reopenDependents(trx: Transaction<Database>, dependencyIds: number[], now: number): Promise<void> {
  const incidents = new Set<number>();
  for (const part of chunked([...new Set(dependencyIds)])) {
    const rows = await trx
      .selectFrom('resource_dependencies as d')
      .innerJoin('resources as r', 'r.id', 'd.resource_id')
      .select('r.open_incident_id')
      .where('d.depends_on_id', 'in', part)
      .where('r.active', '=', 1)
      .where('r.open_incident_id', 'is not', null)
      .execute();
    for (const r of rows) incidents.add(Number(r.open_incident_id));
  }
  const silenced = await silencedIncidents(trx, [...incidents]);
  for (const part of chunked([...silenced])) {
    const first = await trx
      .selectFrom('alert_events')
      .select(['incident_id', 'payload'])
      .where('incident_id', 'in', part)
      .where('kind', '=', 'INCIDENT_OPENED')
      .orderBy('id')
      .execute();
    const done = new Set<number>();
    for (const e of first) {
      if (done.has(e.incident_id!)) continue;
      done.add(e.incident_id!);
      const payload = JSON.parse(e.payload) as AlertEventPayload;
      await enqueueAlertEvent(trx, { ...payload, [AFTER_DEPENDENCY_KEY]: true } as AlertEventPayload, { at: now });
    }
  }
}
