import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError, invalidField, notFound } from '../../../src/errors.ts';
import { resolvePrincipal } from '../../auth/principal.ts';
import { authorize } from '../../http/bind.ts';
import { readBody } from '../../http/body.ts';
import { NOSNIFF } from '../../http/page-headers.ts';
import { sendJson } from '../../http/problem.ts';
import type { PageRow } from '../live-state.ts';
import type { StatusState } from '../state.ts';
import { assetVersion } from './asset-urls.ts';
import { ASSET_MAX_BYTES, type AssetKind, acceptImage, uploadType } from './image.ts';

/**
 * What the logo and favicon are served with, SVG or PNG alike: no script, no
 * fetch, no form, a unique origin (`sandbox`) even when opened on its own.
 */
export const ASSET_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox";

const idOf = (req: IncomingMessage): number => {
  const raw = (req as { params?: Record<string, string> }).params?.id ?? '';
  if (!/^\d{1,15}$/.test(raw)) throw invalidField('id', 'must be an integer');
  return Number(raw);
};

/** `PUT` and `DELETE /admin/api/status-pages/{id}/logo|favicon` (ADMIN): raw bodies, so routes beside the operation table. */
export function assetAdminRoutes(state: StatusState, kind: AssetKind) {
  const { ctx } = state;
  const admit = async (req: IncomingMessage, method: 'PUT' | 'DELETE') => {
    const path = `/admin/api/status-pages/{id}/${kind}`;
    const principal = await resolvePrincipal(req, ctx.keys, ctx.sessions);
    authorize({ id: `${method}-${kind}`, method, path, summary: '', tag: '', access: 'admin' }, principal, req);
    const id = idOf(req);
    const page = await ctx.db.selectFrom('status_pages').select('id').where('id', '=', id).executeTakeFirst();
    if (!page) throw notFound(`Status page ${id} does not exist`);
    return id;
  };
  // The pages' rows change too, so other pods drop their rendered views (they follow status_pages).
  const touched = async (id: number) => {
    await ctx.db.updateTable('status_pages').set({ updated_at: Date.now() }).where('id', '=', id).execute();
    await state.pagesChanged();
  };

  const put = async (req: IncomingMessage, res: ServerResponse) => {
    const id = await admit(req, 'PUT');
    // The declared type first (415 without reading a byte), then the size cap (413 as soon as it is passed).
    const type = (() => {
      try {
        return uploadType(req.headers['content-type']);
      } catch (err) {
        req.resume(); // drain, so the connection can answer
        throw err;
      }
    })();
    const max = ASSET_MAX_BYTES[kind];
    const body = await readBody(req, max).catch((err: unknown) => {
      throw err instanceof HttpError && err.status === 413
        ? new HttpError(413, 'payload-too-large', `The ${kind} must be at most ${max / 1024} KiB`)
        : err;
    });
    const image = acceptImage(type, body);
    const sha256 = createHash('sha256').update(image.bytes).digest('hex');
    const row = { content_type: image.contentType, bytes: image.bytes, sha256, updated_at: Date.now() };
    await ctx.db
      .insertInto('status_page_assets')
      .values({ page_id: id, kind, ...row })
      .onConflict((oc) => oc.columns(['page_id', 'kind']).doUpdateSet(row))
      .execute();
    await touched(id);
    sendJson(res, 200, { kind, contentType: image.contentType, size: image.bytes.length, sha256 });
  };

  const remove = async (req: IncomingMessage, res: ServerResponse) => {
    const id = await admit(req, 'DELETE');
    const result = await ctx.db.deleteFrom('status_page_assets').where('page_id', '=', id).where('kind', '=', kind).executeTakeFirst();
    if (Number(result.numDeletedRows) === 0) throw notFound(`Status page ${id} has no ${kind}`);
    await touched(id);
    sendJson(res, 200, { status: 'deleted' });
  };
  return { put, remove };
}

function matches(req: IncomingMessage, etag: string): boolean {
  const header = req.headers['if-none-match'];
  return !!header && (header.trim() === '*' || header.split(',').some((t) => t.trim() === etag));
}

/**
 * `GET /status/{slug}/logo|favicon` (and `/logo`, `/favicon` on the page's
 * custom hostname): public, as the page is. The page links `?v=<version>`,
 * which never changes meaning and is cached for a year; without it (or with
 * an old one) for five minutes, revalidated by the strong ETag.
 */
export async function serveAsset(
  state: StatusState,
  req: IncomingMessage,
  res: ServerResponse,
  page: PageRow | undefined,
  kind: AssetKind,
) {
  if (!page) throw notFound('No such status page');
  const row = await state.ctx.db
    .selectFrom('status_page_assets')
    .select(['content_type', 'bytes', 'sha256'])
    .where('page_id', '=', page.id)
    .where('kind', '=', kind)
    .executeTakeFirst();
  if (!row) throw notFound(`Status page ${page.slug} has no ${kind}`);
  const version = assetVersion(row.sha256);
  const etag = `"${row.sha256}"`;
  const asked = new URL(req.url ?? '/', 'http://x').searchParams.get('v');
  const headers = {
    'Content-Type': row.content_type,
    ETag: etag,
    'Cache-Control': asked === version ? 'public, max-age=31536000, immutable' : 'public, max-age=300',
    'Content-Security-Policy': ASSET_CSP,
    ...NOSNIFF,
  };
  if (matches(req, etag)) {
    res.writeHead(304, headers).end();
    return;
  }
  const bytes = Buffer.from(row.bytes);
  res.writeHead(200, { ...headers, 'Content-Length': String(bytes.length) });
  res.end(req.method === 'HEAD' ? undefined : bytes);
}
