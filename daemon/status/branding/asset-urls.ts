import type { DaemonContext } from '../../context.ts';
import type { PageRow } from '../live-state.ts';
import type { AssetKind } from './image.ts';

/** The `?v=` of the page's links: the first 16 hex digits of the SHA-256 of what is served (the ETag is all of it). */
export const assetVersion = (sha256: string) => sha256.slice(0, 16);

/** The summary's `logoUrl` and `faviconUrl`: versioned paths on this host, or null when the page has none. */
export async function assetUrls(ctx: DaemonContext, page: PageRow): Promise<Record<AssetKind, string | null>> {
  const rows = await ctx.db.selectFrom('status_page_assets').select(['kind', 'sha256']).where('page_id', '=', page.id).execute();
  const url = (kind: AssetKind) => {
    const row = rows.find((r) => r.kind === kind);
    return row ? `/status/${page.slug}/${kind}?v=${assetVersion(row.sha256)}` : null;
  };
  return { logo: url('logo'), favicon: url('favicon') };
}
