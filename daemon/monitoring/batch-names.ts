import type { Transaction } from 'kysely';
import { conflict, notFound } from '../../src/errors.ts';
import type { Database } from '../store/schema.ts';
import { type Item, type ItemError, itemErrors, type Ref } from './batch-items.ts';

/** What an update or delete acts on: a stored resource, or the one an earlier create of the batch makes. */
export type Target = { id: number; createdBy?: undefined } | { createdBy: number; id?: undefined };

const CHUNK = 500;

/**
 * Walks the items in order over the names they read and write, as the single calls would meet
 * them one after the other: a create whose name is taken (stored, or created earlier in the
 * batch) is a 409 naming `/resource/name`, a rename onto a taken name one naming `/patch/name`,
 * an update or delete of a resource that does not exist (or was deleted earlier) a 404 naming
 * `/id` or `/name`. Two queries per 500 names or ids read what is stored.
 */
export async function planNames(trx: Transaction<Database>, items: readonly Item[]) {
  const stored = await storedNames(trx, items);
  const holders = new Map<string, Target | null>();
  const names = new Map<string, string>(); // current name by target key
  const holder = (name: string): Target | null => {
    if (holders.has(name)) return holders.get(name)!;
    const id = stored.byName.get(name);
    return id === undefined ? null : { id };
  };
  const nameOf = (t: Target) => names.get(key(t)) ?? stored.byId.get(t.id!)!;
  const targets = new Map<number, Target>();
  const errors: ItemError[] = [];
  const refuse = (item: Item, field: string, err: ReturnType<typeof conflict>) => errors.push(...itemErrors(item.index, field, err));

  for (const item of items) {
    if (item.op === 'create') {
      const taken = holder(item.body.name);
      if (taken) refuse(item, '/resource', conflict(takenMessage(item.body.name, taken), 'name'));
      else {
        holders.set(item.body.name, { createdBy: item.index });
        names.set(`new:${item.index}`, item.body.name);
      }
      continue;
    }
    const target = resolve(item.ref, holder, stored.byId, holders);
    if (!target) {
      refuse(item, item.ref.id === undefined ? '/name' : '/id', notFound(missingMessage(item.ref)));
      continue;
    }
    targets.set(item.index, target);
    const current = nameOf(target);
    if (item.op === 'delete') {
      holders.set(current, null);
      if (target.id !== undefined) holders.set(`#${target.id}`, null);
      continue;
    }
    const renamed = item.body.name;
    if (renamed === undefined || renamed === current) continue;
    const taken = holder(renamed);
    if (taken && key(taken) !== key(target)) refuse(item, '/patch', conflict(takenMessage(renamed, taken), 'name'));
    else {
      holders.set(current, null);
      holders.set(renamed, target);
      names.set(key(target), renamed);
    }
  }
  return { targets, errors };
}

const key = (t: Target) => (t.id === undefined ? `new:${t.createdBy}` : `id:${t.id}`);
const takenMessage = (name: string, by: Target) =>
  by.id === undefined ? `A resource named ${name} is also created by item ${by.createdBy}` : `A resource named ${name} exists`;
const missingMessage = (ref: Ref) => (ref.id === undefined ? `No resource named ${ref.name}` : `Resource ${ref.id} does not exist`);

/** The target of a reference: by id a stored resource not deleted earlier, by name whoever holds the name now. */
function resolve(
  ref: Ref,
  holder: (name: string) => Target | null,
  byId: Map<number, string>,
  holders: Map<string, Target | null>,
): Target | null {
  if (ref.id === undefined) return holder(ref.name);
  return byId.has(ref.id) && holders.get(`#${ref.id}`) !== null ? { id: ref.id } : null;
}

/** The stored resources the items name, by id and by name. */
async function storedNames(trx: Transaction<Database>, items: readonly Item[]) {
  const names = new Set<string>();
  const ids = new Set<number>();
  for (const item of items) {
    if (item.op === 'create') names.add(item.body.name);
    else {
      if (item.ref.id !== undefined) ids.add(item.ref.id);
      else names.add(item.ref.name);
      if (item.op === 'update' && item.body.name !== undefined) names.add(item.body.name);
    }
  }
  const byId = new Map<number, string>();
  const byName = new Map<string, number>();
  const read = async <K extends 'id' | 'name'>(column: K, values: Array<K extends 'id' ? number : string>) => {
    for (let i = 0; i < values.length; i += CHUNK) {
      const part = values.slice(i, i + CHUNK) as never[];
      for (const r of await trx.selectFrom('resources').select(['id', 'name']).where(column, 'in', part).execute()) {
        byId.set(Number(r.id), r.name);
        byName.set(r.name, Number(r.id));
      }
    }
  };
  await read('name', [...names]);
  await read('id', [...ids]);
  return { byId, byName };
}
