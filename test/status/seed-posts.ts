import { type DbHandle, openDb } from '../helpers/test-database.ts';

export type Impact = 'none' | 'minor' | 'major' | 'critical';
export type State = 'investigating' | 'identified' | 'monitoring' | 'resolved';

/** A posted incident to write: its timeline oldest first; the last update's state is the incident's. */
export interface PostSeed {
  title: string;
  impact: Impact;
  resources?: Array<[resourceId: number, impact: Impact]>;
  updates: Array<{ state: State; html: string; at: number; automatic?: boolean }>;
}

/**
 * Posted incidents and maintenance notices written straight into the daemon's
 * tables (as test/status/seed-db.ts writes rollups), for tests of what readers
 * see that need rows the admin API would refuse (incidents resolved 20 or 100
 * days ago) or many at once (the bench's 50). The daemon hears of nothing:
 * the caller makes it read again (a resource change does, or the stream's tick).
 */
export class PostsDb {
  readonly #db: DbHandle;

  private constructor(db: DbHandle) {
    this.#db = db;
  }

  static async open(daemon: { dataDir: string; databaseUrl?: string }): Promise<PostsDb> {
    return new PostsDb(await openDb(daemon));
  }

  /** Writes one incident with its resources and timeline; returns its id. */
  incident(pageId: number, p: PostSeed): Promise<number> {
    const first = p.updates[0].at;
    const last = p.updates.at(-1)!;
    const resolvedAt = last.state === 'resolved' ? last.at : null;
    return this.#db.transaction(async () => {
      const [row] = await this.#db.query<{ id: number }>(
        `INSERT INTO status_incidents (page_id, title, impact, state, source_incident_id, created_at, updated_at, resolved_at)
        VALUES (?, ?, ?, ?, NULL, ?, ?, ?) RETURNING id`,
        pageId,
        p.title,
        p.impact,
        last.state,
        first,
        last.at,
        resolvedAt,
      );
      const id = Number(row.id);
      for (const [resourceId, impact] of p.resources ?? [])
        await this.#db.query(
          'INSERT INTO status_incident_resources (incident_id, resource_id, impact) VALUES (?, ?, ?)',
          id,
          resourceId,
          impact,
        );
      for (const u of p.updates)
        await this.#db.query(
          `INSERT INTO status_incident_updates (incident_id, state, message, message_html, automatic, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
          id,
          u.state,
          u.html.replace(/<[^>]+>/g, ''),
          u.html,
          u.automatic ? 1 : 0,
          u.at,
        );
      return id;
    });
  }

  /** A new update on an incident (and its state, and resolved_at when `resolved`). */
  async update(incidentId: number, u: { state: State; html: string; at: number }): Promise<void> {
    await this.#db.transaction(async () => {
      await this.#db.query(
        `INSERT INTO status_incident_updates (incident_id, state, message, message_html, automatic, created_at) VALUES (?, ?, ?, ?, 0, ?)`,
        incidentId,
        u.state,
        u.html.replace(/<[^>]+>/g, ''),
        u.html,
        u.at,
      );
      await this.#db.query(
        'UPDATE status_incidents SET state = ?, updated_at = ?, resolved_at = ? WHERE id = ?',
        u.state,
        u.at,
        u.state === 'resolved' ? u.at : null,
        incidentId,
      );
    });
  }

  /** A maintenance notice of `windowId` on the page; returns its id. */
  async notice(pageId: number, windowId: number, title: string, html: string, at = Date.now()): Promise<number> {
    const [row] = await this.#db.query<{ id: number }>(
      `INSERT INTO status_maintenance_notices (page_id, window_id, title, message, message_html, created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`,
      pageId,
      windowId,
      title,
      html.replace(/<[^>]+>/g, ''),
      html,
      at,
      at,
    );
    return Number(row.id);
  }

  close(): Promise<void> {
    return this.#db.close();
  }
}
