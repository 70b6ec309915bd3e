import type { DaemonContext } from '../context.ts';
import type { Audience, PageRow } from './live-state.ts';
import { Representation, TimedCache } from './page-cache.ts';
import type { PageTable } from './page-table.ts';
import { renderPage } from './render/page-html.ts';
import { buildSummary, type Summary } from './summary.ts';
import { readUptime, type Uptime } from './uptime.ts';

/** How long a rendered page is served before it is rebuilt (in the background), without any change. */
const VIEW_MAX_AGE_MS = 10_000;
/** Rollups change when the rollup job runs (every 5 min): their figures are read at most this often per page. */
const UPTIME_MAX_AGE_MS = 60_000;

/** A page for one audience: its summary, and the HTML and JSON made from it on first use. */
export class PageView {
  readonly summary: Summary;
  readonly #page: PageRow;
  #html: { rep: Representation; csp: string } | undefined;
  #json: Representation | undefined;

  constructor(page: PageRow, summary: Summary) {
    this.#page = page;
    this.summary = summary;
  }

  get html(): { rep: Representation; csp: string } {
    if (!this.#html) {
      const { html, csp } = renderPage(this.summary, {
        eventsPath: `/api/status-pages/${this.#page.slug}/events`, showIncidents: this.#page.show_incidents === 1,
      });
      this.#html = { rep: new Representation(html), csp };
    }
    return this.#html;
  }

  get json(): Representation {
    return (this.#json ??= new Representation(JSON.stringify(this.summary)));
  }
}

/** What the status capability's parts share. */
export class StatusState {
  readonly ctx: DaemonContext;
  readonly pages: PageTable;
  readonly #views = new TimedCache<PageView>(VIEW_MAX_AGE_MS);
  readonly #uptime = new TimedCache<Map<number, Uptime>>(UPTIME_MAX_AGE_MS);
  /** Called after pages changed (set by the live streams, which drop the streams of deleted pages). */
  onPagesChanged: () => void = () => {};

  constructor(ctx: DaemonContext, pages: PageTable) {
    this.ctx = ctx;
    this.pages = pages;
  }

  /** The page as `audience` sees it, from the cache when fresh enough. */
  view(page: PageRow, audience: Audience): Promise<PageView> {
    return this.#views.get(`${page.id}:${page.updated_at}:${audience}`, async () => {
      const summary = await buildSummary(this.ctx, page, audience, (groupIds) =>
        this.#uptime.get(groupIds.join(','), () => readUptime(this.ctx.db, groupIds)));
      return new PageView(page, summary);
    });
  }

  /** Something a page shows changed (a status, an incident, a resource): the next read rebuilds. */
  changed(): void {
    this.#views.invalidateAll();
  }

  /** Resources or groups changed: memberships may differ, so the uptime figures are read again too. */
  membersChanged(): void {
    this.#uptime.invalidateAll();
    this.#views.invalidateAll();
  }

  async pagesChanged(): Promise<void> {
    await this.pages.reload();
    this.#views.invalidateAll();
    this.onPagesChanged();
    this.ctx.bus.emit('status-pages.changed');
  }
}
