import type { DaemonContext } from '../context.ts';
import { parseIds } from './json-ids.ts';
import type { PageTable } from './page-table.ts';

/** The least time between two reads of the members: a burst of resource writes (a batch of 10,000) costs one read a second. */
const RELOAD_EVERY_MS = 1_000;

/**
 * The resources some status page may show (members of a group a page lists, or
 * of any group when a page lists none), so that a status change of a resource
 * on no page leaves the pages' caches alone: with a million resources checked
 * beside a page of a thousand, a page rebuilt on every change elsewhere would
 * spend its time rebuilding. While the set is being read again (groups,
 * memberships or pages changed), every resource counts as shown.
 */
export class PageMembers {
  readonly #ctx: DaemonContext;
  readonly #pages: PageTable;
  #ids = new Set<number>();
  /** A change since the set was read: it may lack a resource. */
  #stale = true;
  #reading = false;
  #timer: NodeJS.Timeout | undefined;
  #lastRead = 0;

  constructor(ctx: DaemonContext, pages: PageTable) {
    this.#ctx = ctx;
    this.#pages = pages;
  }

  /** Whether a change of the resource may show on some page. */
  shows(resourceId: number): boolean {
    if (this.#stale || this.#reading) {
      if (this.#stale) this.#schedule();
      return true;
    }
    return this.#ids.has(resourceId);
  }

  /** Memberships or pages may have changed: read the set again (soon, at most once a second). */
  invalidate(): void {
    this.#stale = true;
    this.#schedule();
  }

  stop(): void {
    clearTimeout(this.#timer);
  }

  #schedule(): void {
    if (this.#timer) return;
    this.#timer = setTimeout(() => void this.#read(), Math.max(0, this.#lastRead + RELOAD_EVERY_MS - Date.now()));
    this.#timer.unref();
  }

  async #read(): Promise<void> {
    this.#lastRead = Date.now();
    // Cleared before the read: a change during it sets it again and schedules the next read.
    this.#stale = false;
    this.#reading = true;
    try {
      const pages = this.#pages.all;
      const listed = pages.map((p) => parseIds(p.group_ids));
      let ids: number[] = [];
      if (pages.length > 0) {
        let query = this.#ctx.db.selectFrom('resource_groups').select('resource_id').distinct();
        if (listed.every((g) => g.length > 0)) query = query.where('group_id', 'in', [...new Set(listed.flat())]);
        ids = (await query.execute()).map((r) => r.resource_id);
      }
      this.#ids = new Set(ids);
    } catch (err) {
      this.#stale = true;
      if (!this.#ctx.draining) this.#ctx.log.warn({ err }, 'status pages: reading their resources failed');
    } finally {
      this.#reading = false;
      this.#timer = undefined;
      if (this.#stale) this.#schedule();
    }
  }
}
