import type { Kysely, Selectable, Transaction } from 'kysely';
import type { statusPageOperations } from '../../src/api/ops/status-pages.ts';
import { conflict, invalidField, notFound } from '../../src/errors.ts';
import { formatDateTime } from '../../src/time.ts';
import { checkGroupIds } from '../monitoring/resource-store.ts';
import { uniqueViolation } from '../store/unique-violation.ts';
import type { HandlersOf } from '../http/bind.ts';
import type { Database, StatusPagesTable } from '../store/schema.ts';
import { normaliseHostname } from '../util/hostname.ts';
import { pageOnHost, routeOnPageHost } from '../tunnel-admin/hostname-clash.ts';
import { brandingColumns, brandingFields } from './branding/fields.ts';
import { parseIds } from './json-ids.ts';
import type { StatusState } from './state.ts';

type Ops = typeof statusPageOperations;
type Row = Selectable<StatusPagesTable>;
type Db = Kysely<Database> | Transaction<Database>;

export function toStatusPage(row: Row) {
  return {
    id: row.id,
    slug: row.slug,
    title: row.title,
    description: row.description,
    groupIds: parseIds(row.group_ids),
    showAnnouncements: row.show_announcements === 1,
    showIncidents: row.show_incidents === 1,
    showErrorDetails: row.show_error_details === 1,
    customHostname: row.custom_hostname,
    httpsRedirect: row.https_redirect === 1,
    footer: row.footer,
    ...brandingFields(row),
    createdAt: formatDateTime(row.created_at),
    updatedAt: formatDateTime(row.updated_at),
  };
}

/** A custom hostname as stored: lower case, no trailing dot; 400 when it is not a host name. */
function hostname(value: string | null | undefined): string | null | undefined {
  if (value === undefined || value === null) return value;
  const host = normaliseHostname(value);
  if (!host) throw invalidField('customHostname', 'must be a DNS name');
  return host;
}

/** Slug and hostname free (409 naming the field), and no route on the hostname's `/` (409). */
async function checkFree(db: Db, slug: string, host: string | null, selfId: number | null): Promise<void> {
  let sameSlug = db.selectFrom('status_pages').select('id').where('slug', '=', slug);
  if (selfId !== null) sameSlug = sameSlug.where('id', '!=', selfId);
  if (await sameSlug.executeTakeFirst()) throw conflict(`A status page with slug ${slug} exists`, 'slug');
  if (host === null) return;
  const page = await pageOnHost(db, host);
  if (page && page.slug !== slug) throw conflict(`Status page ${page.slug} already serves ${host}`, 'customHostname');
  const route = await routeOnPageHost(db, host);
  if (route) throw conflict(`Route ${route.name} serves ${host}/ on the edge listener`, 'customHostname');
}

/** Handlers of `/admin/api/status-pages/**`: every change reloads the page table and drops rendered pages. */
export function pageHandlers(
  state: StatusState,
): Pick<HandlersOf<Ops>, 'listStatusPages' | 'getStatusPage' | 'createStatusPage' | 'updateStatusPage' | 'deleteStatusPage'> {
  const { ctx } = state;
  const find = async (id: number, db: Db = ctx.db) => {
    const row = await db.selectFrom('status_pages').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) throw notFound(`Status page ${id} does not exist`);
    return row;
  };
  const save = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (err) {
      const text = String((err as Error)?.message ?? '');
      throw uniqueViolation(err, /custom_hostname/.test(text) ? 'customHostname' : 'slug') ?? err;
    }
  };

  return {
    async listStatusPages() {
      const rows = await ctx.db.selectFrom('status_pages').selectAll().orderBy('id').execute();
      return rows.map(toStatusPage);
    },

    async getStatusPage({ params }) {
      return toStatusPage(await find(params.id));
    },

    async createStatusPage({ body }) {
      const host = hostname(body.customHostname) ?? null;
      const row = await save(() =>
        ctx.db.transaction().execute(async (trx) => {
          const groupIds = await checkGroupIds(trx, body.groupIds ?? []);
          await checkFree(trx, body.slug, host, null);
          const now = Date.now();
          return trx
            .insertInto('status_pages')
            .values({
              slug: body.slug,
              title: body.title,
              description: body.description ?? null,
              group_ids: JSON.stringify(groupIds),
              show_announcements: body.showAnnouncements === false ? 0 : 1,
              show_incidents: body.showIncidents === false ? 0 : 1,
              show_error_details: body.showErrorDetails ? 1 : 0,
              custom_hostname: host,
              https_redirect: body.httpsRedirect ? 1 : 0,
              footer: body.footer ?? null,
              ...brandingColumns(body),
              created_at: now,
              updated_at: now,
            })
            .returningAll()
            .executeTakeFirstOrThrow();
        }),
      );
      await state.pagesChanged();
      return toStatusPage(row);
    },

    async updateStatusPage({ params, body }) {
      const row = await save(() =>
        ctx.db.transaction().execute(async (trx) => {
          const current = await find(params.id, trx);
          const host = body.customHostname === undefined ? current.custom_hostname : (hostname(body.customHostname) ?? null);
          const slug = body.slug ?? current.slug;
          const groupIds = body.groupIds === undefined ? undefined : await checkGroupIds(trx, body.groupIds);
          await checkFree(trx, slug, host !== current.custom_hostname ? host : null, params.id);
          const updated = await trx
            .updateTable('status_pages')
            .set({
              slug,
              title: body.title ?? current.title,
              description: body.description === undefined ? current.description : body.description,
              group_ids: groupIds === undefined ? current.group_ids : JSON.stringify(groupIds),
              show_announcements: body.showAnnouncements === undefined ? current.show_announcements : body.showAnnouncements ? 1 : 0,
              show_incidents: body.showIncidents === undefined ? current.show_incidents : body.showIncidents ? 1 : 0,
              show_error_details: body.showErrorDetails === undefined ? current.show_error_details : body.showErrorDetails ? 1 : 0,
              custom_hostname: host,
              footer: body.footer === undefined ? current.footer : body.footer,
              ...brandingColumns(body, current),
              updated_at: Date.now(),
              https_redirect: body.httpsRedirect === undefined ? current.https_redirect : body.httpsRedirect ? 1 : 0,
            })
            .where('id', '=', params.id)
            .returningAll()
            .executeTakeFirst();
          if (!updated) throw notFound(`Status page ${params.id} does not exist`);
          return updated;
        }),
      );
      await state.pagesChanged();
      return toStatusPage(row);
    },

    async deleteStatusPage({ params }) {
      const result = await ctx.db.deleteFrom('status_pages').where('id', '=', params.id).executeTakeFirst();
      if (Number(result.numDeletedRows) === 0) throw notFound(`Status page ${params.id} does not exist`);
      await state.pagesChanged();
      return { status: 'deleted' as const };
    },
  };
}
