import type { DaemonContext } from '../context.ts';
import { insertResource } from '../monitoring/resource-create.ts';
import { checkResourceBody } from '../monitoring/resource-store.ts';
import { uniqueViolation } from '../store/unique-violation.ts';
import { freeValue } from './store/slugs.ts';

/** The longest resource name (the API's Name). */
const MAX_NAME = 200;

/**
 * `?create=1` on `/ping/{pingKey}/{slug}` (docs/API.md#push-checks): a PUSH resource for an
 * unknown slug, in the key's group (none for the daemon's key), with the default schedule. Its
 * name is the slug, or `slug-2`, `slug-3`… when a resource has that name. A slug that another
 * push check took meanwhile is a 409 naming `target`; a bad one a 400 naming `target`.
 */
export async function createPushResource(
  ctx: Pick<DaemonContext, 'db' | 'bus' | 'clock' | 'installSecret'>,
  { slug, groupId }: { slug: string; groupId: number | null },
): Promise<{ resourceId: number; uuid: string }> {
  const body = { name: slug, resourceType: 'PUSH' as const, target: slug, groupIds: groupId === null ? [] : [groupId] };
  checkResourceBody(body, ctx.clock.now());
  const created = await ctx.db
    .transaction()
    .execute(async (trx) => {
      const name = await freeValue(trx, 'resources', 'name', slug, MAX_NAME);
      const row = await insertResource(ctx, trx, { ...body, name });
      const push = await trx.selectFrom('push_checks').select('uuid').where('resource_id', '=', row.id).executeTakeFirstOrThrow();
      return { resourceId: row.id, uuid: push.uuid };
    })
    .catch((err: unknown) => {
      throw uniqueViolation(err, 'name') ?? err;
    });
  // The scheduler, the deadline judge, the read caches and (for a resource it does not know yet) the visibility cache.
  ctx.bus.emit('resource.changed', { id: created.resourceId });
  return created;
}
