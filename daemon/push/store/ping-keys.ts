import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../store/schema.ts';

type Db = Kysely<Database> | Transaction<Database>;

/** A ping key as the ping endpoints use it: whose it is (null: the daemon's) and whether `?create=1` may create. */
export interface FoundPingKey {
  id: number;
  groupId: number | null;
  allowCreate: boolean;
}

/** The key `/ping/{key}/{slug}` names, or undefined when there is none. */
export async function findPingKey(db: Db, key: string): Promise<FoundPingKey | undefined> {
  const row = await db.selectFrom('ping_keys').select(['id', 'group_id', 'allow_create']).where('key', '=', key).executeTakeFirst();
  return row && { id: row.id, groupId: row.group_id, allowCreate: row.allow_create === 1 };
}

/** Every key by scope (at most one per group and the daemon's): a list page reads them in one query. */
export interface KeysByScope {
  daemon: string | undefined;
  groups: Map<number, string>;
}

export async function keysByScope(db: Db): Promise<KeysByScope> {
  const out: KeysByScope = { daemon: undefined, groups: new Map() };
  for (const row of await db.selectFrom('ping_keys').select(['key', 'group_id']).execute()) {
    if (row.group_id === null) out.daemon = row.key;
    else out.groups.set(row.group_id, row.key);
  }
  return out;
}

/** The key that pings a resource by slug: its first group (by id) that has one, else the daemon's. */
export function keyFor(keys: KeysByScope, groupIds: readonly number[]): string | undefined {
  for (const id of [...groupIds].sort((a, b) => a - b)) {
    const key = keys.groups.get(id);
    if (key !== undefined) return key;
  }
  return keys.daemon;
}
