import type { DaemonContext } from '../context.ts';
import { CoalescedReload } from '../util/coalesced.ts';
import type { PageRow } from './live-state.ts';

/**
 * Every status page in memory, by slug and by custom hostname: the edge
 * listener matches Host synchronously, and each page request saves a query.
 * Reloaded after every change through the API, and every minute for changes
 * made by another daemon on the same database.
 */
export class PageTable {
  readonly #ctx: DaemonContext;
  #bySlug = new Map<string, PageRow>();
  #byHost = new Map<string, PageRow>();
  #first: PageRow | undefined;
  readonly #reload = new CoalescedReload(async () => {
    const rows = await this.#ctx.db.selectFrom('status_pages').selectAll().orderBy('id').execute();
    this.#bySlug = new Map(rows.map((r) => [r.slug, r]));
    this.#byHost = new Map(rows.flatMap((r) => (r.custom_hostname ? [[r.custom_hostname, r] as const] : [])));
    this.#first = rows[0];
  });

  constructor(ctx: DaemonContext) {
    this.#ctx = ctx;
  }

  reload(): Promise<void> {
    return this.#reload.run();
  }

  bySlug(slug: string): PageRow | undefined {
    return this.#bySlug.get(slug);
  }

  /** The page for a Host header (port and trailing dot ignored, any case). */
  byHost(host: string | undefined): PageRow | undefined {
    if (!host || this.#byHost.size === 0) return undefined;
    const name = host
      .toLowerCase()
      .replace(/^\[(.*)\](?::\d+)?$/, '$1')
      .replace(/:\d+$/, '')
      .replace(/\.$/, '');
    return this.#byHost.get(name);
  }

  /** The page of `/status`: the oldest one. */
  get first(): PageRow | undefined {
    return this.#first;
  }

  get all(): PageRow[] {
    return [...this.#bySlug.values()];
  }
}
