import type { DaemonContext } from '../context.ts';
import { type Audience, type PageRow, readLiveState, shownNames } from './live-state.ts';
import { HISTORY_MS, MAX_HISTORY, readPosted } from './posted-read.ts';
import { renderHistory } from './render/history-html.ts';
import { Representation, TimedCache } from './page-cache.ts';
import { PageMembers } from './page-members.ts';
import type { PageTable } from './page-table.ts';
import { FAVICON, renderPage } from './render/page-html.ts';
import { buildSummary, type Summary } from './summary.ts';
import { readRecent, readRollups, rolledUntil } from './uptime-read.ts';
import { addBuckets, barStart, type Tally, type Uptime, uptimeOf } from './uptime.ts';

/** How long a rendered page is served before it is rebuilt (in the background), without any change. */
const VIEW_MAX_AGE_MS = 10_000;
/**
 * Rollups change when the rollup job moves on (the key then changes) or groups change (dropped then):
 * this age only bounds what another pod's membership changes could leave.
 */
const ROLLUPS_MAX_AGE_MS = 60_000;

/** An HTML representation and the CSP that goes with it. */
export interface HtmlView {
  rep: Representation;
  csp: string;
}

/**
 * A page for one audience: its summary, and the HTML and JSON made from it on
 * first use. The HTML comes in two versions, as its links differ: at
 * `/status/{slug}`, and at `/` on the page's custom hostname (its history at
 * `/history` there).
 */
export class PageView {
  readonly summary: Summary;
  readonly #page: PageRow;
  readonly #html: [HtmlView | undefined, HtmlView | undefined] = [undefined, undefined];
  #json: Representation | undefined;

  constructor(page: PageRow, summary: Summary) {
    this.#page = page;
    this.summary = summary;
  }

  /** The HTML for the API listener's `/status/{slug}`, or (`onHost`) for the page's custom hostname. */
  html(onHost = false): HtmlView {
    const slot = onHost ? 1 : 0;
    if (!this.#html[slot]) {
      const { html, csp } = renderPage(this.summary, {
        eventsPath: `/api/status-pages/${this.#page.slug}/events`,
        showIncidents: this.#page.show_incidents === 1,
        historyPath: historyPath(this.#page, onHost),
      });
      this.#html[slot] = { rep: new Representation(html), csp };
    }
    return this.#html[slot];
  }

  get json(): Representation {
    return (this.#json ??= new Representation(JSON.stringify(this.summary)));
  }
}

/** Where a page's history page is: `/history` on its custom hostname, else under `/status/{slug}`. */
export const historyPath = (page: PageRow, onHost: boolean): string => (onHost ? '/history' : `/status/${page.slug}/history`);

/** What the status capability's parts share. */
export class StatusState {
  readonly ctx: DaemonContext;
  readonly pages: PageTable;
  /** The resources the pages may show: a check result of any other leaves the caches alone. */
  readonly members: PageMembers;
  readonly #views = new TimedCache<PageView>(VIEW_MAX_AGE_MS);
  /** History pages, per page, audience and host kind: kept and dropped as the views are. */
  readonly #history = new TimedCache<HtmlView>(VIEW_MAX_AGE_MS);
  /** The rollups' tallies per group set, all read for one rollup end, UTC day and hour (`#rollupsFor`); raw checks are added per view. */
  readonly #rollups = new TimedCache<Map<number, Tally>>(ROLLUPS_MAX_AGE_MS);
  #rollupsFor = '';
  /** Called after pages changed (set by the live streams, which drop the streams of deleted pages). */
  onPagesChanged: () => void = () => {};

  constructor(ctx: DaemonContext, pages: PageTable) {
    this.ctx = ctx;
    this.pages = pages;
    this.members = new PageMembers(ctx, pages);
  }

  /** The page as `audience` sees it, from the cache when fresh enough. */
  view(page: PageRow, audience: Audience): Promise<PageView> {
    return this.#views.get(`${page.id}:${page.updated_at}:${audience}`, async () => {
      const summary = await buildSummary(this.ctx, page, audience, (groupIds) => this.uptime(groupIds));
      return new PageView(page, summary);
    });
  }

  /** The history page (posted incidents of the last 90 days) as `audience` sees it, at `/status/{slug}/history` or (`onHost`) `/history`. */
  history(page: PageRow, audience: Audience, onHost: boolean): Promise<HtmlView> {
    return this.#history.get(`${page.id}:${page.updated_at}:${audience}:${onHost}`, async () => {
      const now = Date.now();
      const live = await readLiveState(this.ctx, page, audience, now);
      const incidents = await readPosted(this.ctx, page.id, shownNames(live), now - HISTORY_MS, MAX_HISTORY, false);
      const { html, csp } = renderHistory(page, incidents, { pagePath: onHost ? '/' : `/status/${page.slug}`, favicon: FAVICON });
      return { rep: new Representation(html), csp };
    });
  }

  /**
   * The figures of the resources of `groupIds`: the rollups (cached) plus the
   * raw checks not rolled up yet (read with each view, so a check counts from
   * the moment it is written: views live 10 s and go at once on a change).
   */
  async uptime(groupIds: number[], now = Date.now()): Promise<Map<number, Uptime>> {
    const { db } = this.ctx;
    const until = await rolledUntil(db, now);
    const members = { groupIds };
    // A new rollup end, day or hour changes what the rollups hold: all are read again, and the old ones go (they would pile up).
    const stamp = `${until}:${barStart(now)}:${Math.floor(now / 3_600_000)}`;
    if (stamp !== this.#rollupsFor) {
      this.#rollups.invalidateAll();
      this.#rollupsFor = stamp;
    }
    const [rolled, recent] = await Promise.all([
      // The stamp in the key too: a read that raced a new stamp gets rollups of its own `until`, never another's.
      this.#rollups.get(`${groupIds.join(',')}@${stamp}`, async () =>
        addBuckets(new Map(), await readRollups(db, members, until, now), now),
      ),
      readRecent(db, members, until, now),
    ]);
    const tallies = addBuckets(new Map(rolled), recent, now, true);
    return new Map([...tallies].map(([id, t]) => [id, uptimeOf(t)]));
  }

  /** Something a page shows changed (a status, an incident, a resource): the next read rebuilds. */
  changed(): void {
    this.#views.invalidateAll();
    this.#history.invalidateAll();
  }

  /** Resources or groups changed: memberships may differ, so the uptime figures are read again too. */
  membersChanged(): void {
    this.members.invalidate();
    this.#rollups.invalidateAll();
    this.changed();
  }

  async pagesChanged(): Promise<void> {
    await this.pages.reload();
    this.members.invalidate();
    this.changed();
    this.onPagesChanged();
    this.ctx.bus.emit('status-pages.changed');
  }
}
