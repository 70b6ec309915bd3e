import type { Kysely, Transaction } from 'kysely';
import { notFound } from '../../../src/errors.ts';
import type { DaemonContext } from '../../context.ts';
import type { Database } from '../../store/schema.ts';

/** The page of the path; 404 when there is none. */
export async function findPage(db: Kysely<Database> | Transaction<Database>, id: number) {
  const page = await db.selectFrom('status_pages').selectAll().where('id', '=', id).executeTakeFirst();
  if (!page) throw notFound(`Status page ${id} does not exist`);
  return page;
}

/**
 * After the commit: the page's cached views and live streams hear of the change, and,
 * when an outbox row was written, the fan-out wakes (a slow tick finds it otherwise).
 */
export function postsChanged(ctx: Pick<DaemonContext, 'bus'>, pageId: number, enqueued: boolean): void {
  ctx.bus.emit('status.posts.changed', { pageId });
  if (enqueued) ctx.bus.emit('status.subscribers.enqueued');
}
