import type { Static } from '@sinclair/typebox';
import type { Transaction } from 'kysely';
import type { ResourceCreate } from '../../src/api/schemas/monitoring.ts';
import type { DaemonContext } from '../context.ts';
import { shapedChunks } from '../store/batches.ts';
import type { Database } from '../store/schema.ts';
import { type ItemError, itemErrors } from './batch-items.ts';
import { resourceValues } from './resource-create.ts';
import { noSuchGroups } from './resource-store.ts';

type Create = { index: number; body: Static<typeof ResourceCreate> };

/**
 * A create that needs nothing but its row and its groups (not PUSH, no locations, no
 * dependencies): a batch writes a run of them as multi-row inserts. The others go through
 * insertResource one by one.
 */
export function plainCreate(body: Static<typeof ResourceCreate>): boolean {
  return body.resourceType !== 'PUSH' && !body.locations?.length && !body.dependsOn?.length;
}

/**
 * Inserts `creates` (plain ones, names already checked free) with 256 rows per statement, and
 * their groups; a group id that does not exist refuses its item as insertResource would
 * (400 naming `/resource/groupIds`). Returns each created id by item index.
 */
export async function insertPlain(
  ctx: Pick<DaemonContext, 'installSecret'>,
  trx: Transaction<Database>,
  creates: readonly Create[],
  errors: ItemError[],
  now: number,
): Promise<Map<number, number>> {
  const known = await knownGroups(trx, creates);
  const ok: Create[] = [];
  for (const c of creates) {
    const missing = [...new Set(c.body.groupIds ?? [])].filter((g) => !known.has(g));
    if (missing.length === 0) ok.push(c);
    else errors.push(...itemErrors(c.index, '/resource', noSuchGroups(missing)));
  }
  const ids = new Map<number, number>();
  const byName = new Map<string, number>();
  for (const part of shapedChunks(ok, 256)) {
    const rows = await trx
      .insertInto('resources')
      .values(part.map((c) => resourceValues(ctx, c.body, c.body.target ?? '', now)))
      .returning(['id', 'name'])
      .execute();
    for (const r of rows) byName.set(r.name, Number(r.id));
  }
  const memberships: Array<{ resource_id: number; group_id: number }> = [];
  for (const c of ok) {
    const id = byName.get(c.body.name)!;
    ids.set(c.index, id);
    for (const g of new Set(c.body.groupIds ?? [])) memberships.push({ resource_id: id, group_id: g });
  }
  for (const part of shapedChunks(memberships, 256)) await trx.insertInto('resource_groups').values(part).execute();
  return ids;
}

async function knownGroups(trx: Transaction<Database>, creates: readonly Create[]): Promise<Set<number>> {
  const wanted = [...new Set(creates.flatMap((c) => c.body.groupIds ?? []))];
  const known = new Set<number>();
  for (let i = 0; i < wanted.length; i += 500) {
    const rows = await trx
      .selectFrom('groups')
      .select('id')
      .where('id', 'in', wanted.slice(i, i + 500))
      .execute();
    for (const r of rows) known.add(Number(r.id));
  }
  return known;
}
