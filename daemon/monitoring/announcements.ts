import type { Selectable } from 'kysely';
import type { announcementOperations } from '../../src/api/ops/announcements.ts';
import { MAX_CONTENT_BYTES } from '../../src/api/schemas/announcements.ts';
import { invalidField, notFound } from '../../src/errors.ts';
import { formatDateTime, formatNullable, parseDateTime } from '../../src/time.ts';
import type { AnnouncementsTable } from '../store/schema.ts';
import { sanitizeAnnouncement } from './sanitize.ts';
import type { HandlersOf } from '../http/bind.ts';

type Ops = typeof announcementOperations;
type Kind = 'INFORMATION' | 'WARNING' | 'PROBLEM';

/** `active` reads false once `activeUntil` has passed, computed at read time: nothing rewrites the row. */
function toAnnouncement(row: Selectable<AnnouncementsTable>, now = Date.now()) {
  return {
    id: row.id,
    kind: row.kind as Kind,
    content: row.content,
    createdBy: row.created_by,
    active: row.active === 1 && (row.active_until === null || row.active_until > now),
    activeUntil: formatNullable(row.active_until),
    createdAt: formatDateTime(row.created_at),
    updatedAt: formatDateTime(row.updated_at),
  };
}

/** The stored fields of a POST or PUT body: content sanitized, at most 64 KiB of UTF-8 as sent. */
function fieldsOf(body: { kind: Kind; content: string; active: boolean; activeUntil?: string | null }) {
  if (Buffer.byteLength(body.content, 'utf8') > MAX_CONTENT_BYTES) {
    throw invalidField('content', `must be at most ${MAX_CONTENT_BYTES} bytes`);
  }
  return {
    kind: body.kind,
    content: sanitizeAnnouncement(body.content),
    active: body.active ? 1 : 0,
    active_until: body.activeUntil == null ? null : parseDateTime(body.activeUntil)!,
  };
}

/** Handlers of `/api/announcements/**`. */
export const announcementHandlers: HandlersOf<Ops> = {
  async listAnnouncements({ ctx }) {
    const rows = await ctx.db.selectFrom('announcements').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
    const now = Date.now();
    return rows.map((row) => toAnnouncement(row, now));
  },

  async getAnnouncement({ ctx, params }) {
    const row = await ctx.db.selectFrom('announcements').selectAll().where('id', '=', params.id).executeTakeFirst();
    if (!row) throw notFound(`Announcement ${params.id} does not exist`);
    return toAnnouncement(row);
  },

  async createAnnouncement({ ctx, body, principal }) {
    if (principal.kind !== 'user') throw new Error('unreachable: createAnnouncement needs ADMIN');
    const now = Date.now();
    const row = await ctx.db
      .insertInto('announcements')
      .values({
        ...fieldsOf(body),
        created_by: principal.username,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toAnnouncement(row);
  },

  async replaceAnnouncement({ ctx, params, body }) {
    const fields = fieldsOf(body);
    const row = await ctx.db
      .updateTable('announcements')
      .set({ ...fields, updated_at: Date.now() })
      .where('id', '=', params.id)
      .returningAll()
      .executeTakeFirst();
    if (!row) throw notFound(`Announcement ${params.id} does not exist`);
    return toAnnouncement(row);
  },

  async deleteAnnouncement({ ctx, params }) {
    const result = await ctx.db.deleteFrom('announcements').where('id', '=', params.id).executeTakeFirst();
    if (Number(result.numDeletedRows) === 0) throw notFound(`Announcement ${params.id} does not exist`);
    return { status: 'deleted' as const };
  },
};
