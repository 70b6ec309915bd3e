import type { Kysely, Transaction } from 'kysely';
import { invalidField } from '../../src/errors.ts';
import { shapedChunks } from '../store/batches.ts';
import type { Database } from '../store/schema.ts';
import type { GroupRef } from './mappers.ts';

type Db = Kysely<Database> | Transaction<Database>;
const chunked = (ids: readonly number[]) => shapedChunks(ids, 256);

/**
 * The API's `dependsOn` (docs/API.md#dependencies): resource names, or ids (a number, or a
 * string of digits that names no resource), resolved to ids in the order given, duplicates
 * dropped. 400 naming `dependsOn` for an unknown resource, the resource itself, or a cycle
 * (`self.id` set: a PATCH; a new resource has no dependents, so it closes no cycle).
 */
export async function resolveDependencies(
  db: Db,
  refs: ReadonlyArray<string | number>,
  self: { id?: number; name: string },
): Promise<number[]> {
  if (refs.length === 0) return [];
  const names = refs.filter((r): r is string => typeof r === 'string');
  const numbers = refs.map(Number).filter((n) => Number.isSafeInteger(n) && n > 0);
  const rows = await db
    .selectFrom('resources')
    .select(['id', 'name'])
    .where((eb) => eb.or([eb('name', 'in', names.length > 0 ? names : ['']), eb('id', 'in', numbers.length > 0 ? numbers : [0])]))
    .execute();
  const byName = new Map(rows.map((r) => [r.name, Number(r.id)]));
  const nameOf = new Map(rows.map((r) => [Number(r.id), r.name]));
  const out: number[] = [];
  for (const ref of refs) {
    let id = typeof ref === 'string' ? byName.get(ref) : undefined;
    if (id === undefined && (typeof ref === 'number' || /^\d{1,15}$/.test(ref)) && nameOf.has(Number(ref))) id = Number(ref);
    if (ref === self.name || (id !== undefined && id === self.id)) {
      throw invalidField('dependsOn', `a resource cannot depend on itself: ${self.name} -> ${self.name}`);
    }
    if (id === undefined) throw invalidField('dependsOn', `no resource named or numbered "${ref}"`);
    if (!out.includes(id)) out.push(id);
  }
  if (self.id !== undefined) await refuseCycle(db, self.id, self.name, out);
  return out;
}

/** The stored edges out of `ids` (what each depends on), `IN` lists chunked: the one query both walks use. */
export async function dependencyEdges(db: Db, ids: readonly number[]): Promise<Array<{ from: number; to: number }>> {
  const out: Array<{ from: number; to: number }> = [];
  for (const part of chunked(ids)) {
    const rows = await db
      .selectFrom('resource_dependencies')
      .select(['resource_id', 'depends_on_id'])
      .where('resource_id', 'in', part)
      .execute();
    for (const row of rows) out.push({ from: Number(row.resource_id), to: Number(row.depends_on_id) });
  }
  return out;
}

/**
 * A 400 when `self` is reachable from one of `deps` through the stored edges: the new edges
 * would close a cycle. Breadth first, one query per level; each resource is visited once, so
 * the search ends whatever the graph holds.
 */
async function refuseCycle(db: Db, self: number, selfName: string, deps: number[]): Promise<void> {
  const parent = new Map<number, number>(deps.map((d) => [d, self]));
  let level = deps;
  while (level.length > 0) {
    const next: number[] = [];
    for (const { from, to } of await dependencyEdges(db, level)) {
      if (to === self) throw invalidField('dependsOn', `a cycle: ${await cyclePath(db, parent, from, selfName)}`);
      if (parent.has(to)) continue;
      parent.set(to, from);
      next.push(to);
    }
    level = next;
  }
}

/** "api -> db -> api": the names along the parents from `self` to `last`, then `self` again. */
async function cyclePath(db: Db, parent: Map<number, number>, last: number, selfName: string): Promise<string> {
  const ids: number[] = [];
  for (let at = last; parent.has(at); at = parent.get(at)!) ids.unshift(at);
  const rows = await db.selectFrom('resources').select(['id', 'name']).where('id', 'in', ids).execute();
  const names = new Map(rows.map((r) => [Number(r.id), r.name]));
  return [selfName, ...ids.map((id) => names.get(id) ?? `#${id}`), selfName].join(' -> ');
}

/** Replaces a resource's dependencies (an empty list removes them). */
export async function setDependencies(trx: Transaction<Database>, id: number, deps: readonly number[]): Promise<void> {
  await trx.deleteFrom('resource_dependencies').where('resource_id', '=', id).execute();
  for (const part of chunked(deps)) {
    await trx
      .insertInto('resource_dependencies')
      .values(part.map((d) => ({ resource_id: id, depends_on_id: d })))
      .execute();
  }
}

/** Each resource's dependencies as `{id, name}`, sorted by id: one query per 256 resources (`ids` undefined: all). */
export async function dependenciesOf(db: Db, ids?: readonly number[]): Promise<Map<number, GroupRef[]>> {
  const out = new Map<number, GroupRef[]>();
  const parts: Array<readonly number[] | undefined> = ids === undefined ? [undefined] : chunked([...new Set(ids)]);
  for (const part of parts) {
    let query = db
      .selectFrom('resource_dependencies as d')
      .innerJoin('resources as r', 'r.id', 'd.depends_on_id')
      .select(['d.resource_id', 'r.id', 'r.name']);
    if (part) query = query.where('d.resource_id', 'in', part);
    for (const row of await query.orderBy('d.resource_id').orderBy('r.id').execute()) {
      const list = out.get(Number(row.resource_id)) ?? [];
      list.push({ id: Number(row.id), name: row.name });
      out.set(Number(row.resource_id), list);
    }
  }
  return out;
}

/** Same ids, order aside. */
export const sameDependencies = (a: readonly number[], b: readonly GroupRef[]) =>
  a.length === b.length && [...a].sort((x, y) => x - y).every((id, i) => id === b[i].id);
