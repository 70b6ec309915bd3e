import { join } from 'node:path';
import Database from 'better-sqlite3';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * Writes what the status page reads but no API of this branch writes yet,
 * straight into the daemon's SQLite file (WAL: the daemon keeps running):
 * rollups as the rollup job would have written them over 90 days, and past
 * incidents (the incident engine opens incidents only from checks made now).
 */
export class SeedDb {
  readonly #db: Database.Database;

  constructor(dataDir: string) {
    this.#db = new Database(join(dataDir, 'monctl.db'), { fileMustExist: true });
    this.#db.pragma('busy_timeout = 5000');
  }

  /**
   * Daily rollups for the 89 days before today (`dayUptime(daysAgo)` gives
   * `[checks, available]`, or undefined for no row), and hourly ones for the
   * last 24 complete hours (`hourUptime(hoursAgo)`).
   */
  rollups(resourceId: number, dayUptime: (daysAgo: number) => [number, number] | undefined,
    hourUptime: (hoursAgo: number) => [number, number] | undefined, now = Date.now()): void {
    const today = Math.floor(now / DAY) * DAY;
    const hour = Math.floor(now / HOUR) * HOUR;
    const daily = this.#db.prepare('INSERT OR REPLACE INTO check_rollups_daily (resource_id, bucket_start, checks, available, duration_sum_ms, duration_p95_ms) VALUES (?, ?, ?, ?, ?, ?)');
    const hourly = this.#db.prepare('INSERT OR REPLACE INTO check_rollups_hourly (resource_id, bucket_start, checks, available, duration_sum_ms, duration_p95_ms) VALUES (?, ?, ?, ?, ?, ?)');
    this.#db.transaction(() => {
      for (let ago = 1; ago <= 89; ago++) {
        const v = dayUptime(ago);
        if (v) daily.run(resourceId, today - ago * DAY, v[0], v[1], v[0] * 20, 40);
      }
      for (let ago = 1; ago <= 24; ago++) {
        const v = hourUptime(ago);
        if (v) hourly.run(resourceId, hour - ago * HOUR, v[0], v[1], v[0] * 20, 40);
      }
    })();
  }

  /** An incident row; resolvedAt null while open. Returns its id. */
  incident(resourceId: number, openedAt: number, resolvedAt: number | null, cause: string, maintenance = false): number {
    const result = this.#db.prepare(`INSERT INTO incidents (subject_type, resource_id, agent_id, opened_at, resolved_at, cause_message, cause_error_code, checks, maintenance)
      VALUES ('resource', ?, NULL, ?, ?, ?, 'CONNECTION_ERROR', 3, ?)`).run(resourceId, openedAt, resolvedAt, cause, maintenance ? 1 : 0);
    return Number(result.lastInsertRowid);
  }

  close(): void {
    this.#db.close();
  }
}
