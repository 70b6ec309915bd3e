import type { ExpressionBuilder } from 'kysely';
import type { Visibility } from '../../src/api/schemas/monitoring.ts';
import type { Principal } from '../auth/principal.ts';
import type { DaemonContext } from '../context.ts';
import { resourceIdRanges } from '../store/resource-id-ranges.ts';
import type { Database } from '../store/schema.ts';
import { CoalescedReload } from '../util/coalesced.ts';

/**
 * The seed's visibility rules: the most permissive group wins, a resource
 * without a group counts as public, HIDDEN never shows in public views and
 * AUTHENTICATED not to anonymous callers.
 */
const RANK: Record<Visibility, number> = { HIDDEN: 0, AUTHENTICATED: 1, PUBLIC: 2 };

/** Group visibilities a caller may see through (the most permissive one decides). */
export function visibleLevels(principal: Principal): Visibility[] {
  return principal.kind === 'anonymous' ? ['PUBLIC'] : ['PUBLIC', 'AUTHENTICATED'];
}

/** A kysely condition on `resources`: the resource has no group, or one the caller may see through. */
export function visibleTo(principal: Principal) {
  const levels = visibleLevels(principal);
  return (eb: ExpressionBuilder<Database, 'resources'>) =>
    eb.or([
      eb.not(eb.exists(eb.selectFrom('resource_groups as rg0').select('rg0.group_id').whereRef('rg0.resource_id', '=', 'resources.id'))),
      eb.exists(
        eb
          .selectFrom('resource_groups as rg1')
          .innerJoin('groups as g1', 'g1.id', 'rg1.group_id')
          .select('rg1.group_id')
          .whereRef('rg1.resource_id', '=', 'resources.id')
          .where('g1.visibility', 'in', levels),
      ),
    ]);
}

/** Effective visibility of a resource from its groups' visibilities. */
export function effectiveVisibility(groupVisibilities: string[]): Visibility {
  if (groupVisibilities.length === 0) return 'PUBLIC';
  let best: Visibility = 'HIDDEN';
  for (const v of groupVisibilities) if (v in RANK && RANK[v as Visibility] > RANK[best]) best = v as Visibility;
  return best;
}

export function mayEnter(principal: Principal, visibility: Visibility): boolean {
  if (visibility === 'PUBLIC') return true;
  if (visibility === 'AUTHENTICATED') return principal.kind === 'user';
  return false;
}

/** Resource ids per query of a full read. */
const READ_PAGE = 20_000;

/**
 * Every resource's effective visibility, in memory, for the SSE filter that
 * runs for every event and subscriber. One resource is re-read when it is
 * created or its groups change; a group change reloads the whole map (in
 * pages of ids).
 */
export class VisibilityCache {
  readonly #ctx: DaemonContext;
  /** Called whenever visibilities may have changed (groups, a resource's groups). */
  readonly #onChange: () => void;
  #map = new Map<number, Visibility>();
  readonly #reload = new CoalescedReload(async () => {
    this.#map = await this.#read();
    this.#onChange();
  });

  constructor(ctx: DaemonContext, onChange: () => void = () => {}) {
    this.#ctx = ctx;
    this.#onChange = onChange;
  }

  get(resourceId: number): Visibility | undefined {
    return this.#map.get(resourceId);
  }

  /** Reloads; concurrent calls coalesce, and a call during a load triggers one more. */
  reload(): Promise<void> {
    return this.#reload.run();
  }

  /**
   * Re-reads one resource after it was created or its groups changed: a bulk
   * `apply` of thousands of resources must not reload the whole map each time.
   */
  refresh(resourceId: number): Promise<void> {
    return this.refreshMany([resourceId]);
  }

  /** Re-reads these resources (a batch's), 500 per query. */
  async refreshMany(ids: readonly number[]): Promise<void> {
    // A full reload under way may have read before this change: have it read again.
    this.#reload.invalidate();
    for (let i = 0; i < ids.length; i += 500) {
      const part = ids.slice(i, i + 500);
      const rows = await this.#joined().where('resources.id', 'in', part).execute();
      const levels = levelsOf(rows);
      for (const id of part) {
        const list = levels.get(id);
        if (list === undefined) this.#map.delete(id);
        else this.#map.set(id, effectiveVisibility(list));
      }
    }
    this.#onChange();
  }

  forget(resourceId: number): void {
    this.#map.delete(resourceId);
    this.#onChange();
  }

  /** Each resource's id with the visibility of each of its groups (null: none). */
  #joined() {
    return this.#ctx.db
      .selectFrom('resources')
      .leftJoin('resource_groups', 'resource_groups.resource_id', 'resources.id')
      .leftJoin('groups', 'groups.id', 'resource_groups.group_id')
      .select(['resources.id as id', 'groups.visibility as visibility']);
  }

  /** Every resource's visibility, READ_PAGE ids per query with a turn of the event loop between: checks keep their schedule during a read of a million. */
  async #read(): Promise<Map<number, Visibility>> {
    const map = new Map<number, Visibility>();
    for await (const [from, to] of resourceIdRanges(this.#ctx.db, READ_PAGE)) {
      const rows = await this.#joined().where('resources.id', '>', from).where('resources.id', '<=', to).execute();
      for (const [id, list] of levelsOf(rows)) map.set(id, effectiveVisibility(list));
    }
    return map;
  }
}

/** Each resource's group visibilities, from rows of a left join (a null visibility: no group). */
function levelsOf(rows: ReadonlyArray<{ id: number; visibility: string | null }>): Map<number, string[]> {
  const levels = new Map<number, string[]>();
  for (const row of rows) {
    const list = levels.get(row.id) ?? [];
    if (row.visibility !== null) list.push(row.visibility);
    levels.set(row.id, list);
  }
  return levels;
}
