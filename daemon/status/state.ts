import type { DaemonContext } from '../context.ts';
import type { Audience, PageRow } from './live-state.ts';
import { Representation, TimedCache } from './page-cache.ts';
import type { PageTable } from './page-table.ts';
import { renderPage } from './render/page-html.ts';
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
        eventsPath: `/api/status-pages/${this.#page.slug}/events`,
        showIncidents: this.#page.show_incidents === 1,
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
  /** The rollups' tallies per group set, all read for one rollup end, UTC day and hour (`#rollupsFor`); raw checks are added per view. */
  readonly #rollups = new TimedCache<Map<number, Tally>>(ROLLUPS_MAX_AGE_MS);
  #rollupsFor = '';
  /** Called after pages changed (set by the live streams, which drop the streams of deleted pages). */
  onPagesChanged: () => void = () => {};

  constructor(ctx: DaemonContext, pages: PageTable) {
    this.ctx = ctx;
    this.pages = pages;
  }

  /** The page as `audience` sees it, from the cache when fresh enough. */
  view(page: PageRow, audience: Audience): Promise<PageView> {
    return this.#views.get(`${page.id}:${page.updated_at}:${audience}`, async () => {
      const summary = await buildSummary(this.ctx, page, audience, (groupIds) => this.uptime(groupIds));
      return new PageView(page, summary);
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
  }

  /** Resources or groups changed: memberships may differ, so the uptime figures are read again too. */
  membersChanged(): void {
    this.#rollups.invalidateAll();
    this.#views.invalidateAll();
  }

  async pagesChanged(): Promise<void> {
    await this.pages.reload();
    this.#views.invalidateAll();
    this.onPagesChanged();
    this.ctx.bus.emit('status-pages.changed');
  }
}
