import type { Kysely, Selectable, Transaction } from 'kysely';
import type { statusIncidentOperations } from '../../../src/api/ops/status-incidents.ts';
import { conflict, invalidField, notFound } from '../../../src/errors.ts';
import { formatDateTime } from '../../../src/time.ts';
import { toWindow } from '../../alerts/maintenance/rules.ts';
import type { HandlersOf } from '../../http/bind.ts';
import type { Database, StatusMaintenanceNoticesTable } from '../../store/schema.ts';
import { uniqueViolation } from '../../store/unique-violation.ts';
import { enqueueSubscriberMessage } from '../subscribers/outbox.ts';
import { findPage, postsChanged } from './page.ts';
import { renderMessage } from './markdown.ts';

type Ops = Pick<
  typeof statusIncidentOperations,
  'listMaintenanceNotices' | 'createMaintenanceNotice' | 'updateMaintenanceNotice' | 'deleteMaintenanceNotice'
>;
type Db = Kysely<Database> | Transaction<Database>;

function toNotice(row: Selectable<StatusMaintenanceNoticesTable>) {
  return {
    id: row.id,
    pageId: row.page_id,
    windowId: row.window_id,
    title: row.title,
    message: row.message,
    messageHtml: row.message_html,
    createdAt: formatDateTime(row.created_at),
    updatedAt: formatDateTime(row.updated_at),
  };
}

/** The window, or a 400 naming `windowId` (it is a field of the body, not the path). */
async function findWindow(db: Db, id: number) {
  const row = await db.selectFrom('maintenance_windows').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw invalidField('windowId', `maintenance window ${id} does not exist`);
  return row;
}

/** One notice per window and page: the unique constraint says so across pods, this says it with the field. */
const taken = (err: unknown) => uniqueViolation(err, 'windowId') ?? err;

/** Handlers of `/admin/api/status-pages/{id}/maintenance-notices/**` (docs/API.md#posted-incidents). */
export const noticeHandlers: HandlersOf<Ops> = {
  async listMaintenanceNotices({ ctx, params }) {
    await findPage(ctx.db, params.id);
    const rows = await ctx.db.selectFrom('status_maintenance_notices').selectAll().where('page_id', '=', params.id).orderBy('id').execute();
    return rows.map(toNotice);
  },

  async createMaintenanceNotice({ ctx, params, body }) {
    const messageHtml = renderMessage(body.message);
    const row = await ctx.db
      .transaction()
      .execute(async (trx) => {
        const page = await findPage(trx, params.id);
        const window = await findWindow(trx, body.windowId);
        const same = await trx
          .selectFrom('status_maintenance_notices')
          .select('id')
          .where('page_id', '=', page.id)
          .where('window_id', '=', window.id)
          .executeTakeFirst();
        if (same) throw conflict(`Status page ${page.slug} already shows maintenance window ${window.id} (notice ${same.id})`, 'windowId');
        const now = Date.now();
        const notice = await trx
          .insertInto('status_maintenance_notices')
          .values({
            page_id: page.id,
            window_id: window.id,
            title: body.title,
            message: body.message,
            message_html: messageHtml,
            created_at: now,
            updated_at: now,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        // Readers hear of planned work when it is posted, with the window's times as they stand now.
        const { name, activeNow, nextStart, nextEnd } = toWindow(window, now);
        await enqueueSubscriberMessage(
          trx,
          {
            kind: 'MAINTENANCE',
            pageId: page.id,
            payload: {
              page: { id: page.id, slug: page.slug, title: page.title },
              notice: toNotice(notice),
              window: {
                id: window.id,
                name,
                activeNow,
                nextStart,
                nextEnd,
                resourceIds: JSON.parse(window.resource_ids),
                groupIds: JSON.parse(window.group_ids),
              },
            },
          },
          now,
        );
        return notice;
      })
      .catch((err: unknown) => {
        throw taken(err);
      });
    postsChanged(ctx, params.id, true);
    return toNotice(row);
  },

  async updateMaintenanceNotice({ ctx, params, body }) {
    const messageHtml = body.message === undefined ? undefined : renderMessage(body.message);
    const row = await ctx.db
      .transaction()
      .execute(async (trx) => {
        await findPage(trx, params.id);
        if (body.windowId !== undefined) await findWindow(trx, body.windowId);
        const updated = await trx
          .updateTable('status_maintenance_notices')
          .set({
            ...(body.windowId === undefined ? {} : { window_id: body.windowId }),
            ...(body.title === undefined ? {} : { title: body.title }),
            ...(body.message === undefined ? {} : { message: body.message, message_html: messageHtml }),
            updated_at: Date.now(),
          })
          .where('id', '=', params.noticeId)
          .where('page_id', '=', params.id)
          .returningAll()
          .executeTakeFirst();
        if (!updated) throw notFound(`Status page ${params.id} has no maintenance notice ${params.noticeId}`);
        return updated;
      })
      .catch((err: unknown) => {
        throw taken(err);
      });
    postsChanged(ctx, params.id, false);
    return toNotice(row);
  },

  async deleteMaintenanceNotice({ ctx, params }) {
    await findPage(ctx.db, params.id);
    const gone = await ctx.db
      .deleteFrom('status_maintenance_notices')
      .where('id', '=', params.noticeId)
      .where('page_id', '=', params.id)
      .executeTakeFirst();
    if (Number(gone.numDeletedRows) === 0) throw notFound(`Status page ${params.id} has no maintenance notice ${params.noticeId}`);
    postsChanged(ctx, params.id, false);
    return { status: 'deleted' as const };
  },
};
