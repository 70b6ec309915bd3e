import { type DbHandle, openDb } from '../helpers/test-database.ts';
import { outcomeKey } from '../../daemon/store/outcome-key.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const UPSERT_ROLLUP = (
  table: string,
) => `INSERT INTO ${table} (resource_id, bucket_start, checks, available, duration_sum_ms, duration_p95_ms)
  VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (resource_id, bucket_start) DO UPDATE SET checks = excluded.checks, available = excluded.available,
  duration_sum_ms = excluded.duration_sum_ms, duration_p95_ms = excluded.duration_p95_ms`;

/**
 * Writes what the status page reads but no API of this branch writes yet,
 * straight into the daemon's database (SQLite in WAL mode, or its PostgreSQL
 * database: the daemon keeps running): rollups as the rollup job would have
 * written them over 90 days, and past incidents (the incident engine opens
 * incidents only from checks made now).
 */
export class SeedDb {
  readonly #db: DbHandle;

  private constructor(db: DbHandle) {
    this.#db = db;
  }

  static async open(daemon: { dataDir: string; databaseUrl?: string }): Promise<SeedDb> {
    return new SeedDb(await openDb(daemon));
  }

  /**
   * Daily rollups for the 89 days before today (`dayUptime(daysAgo)` gives
   * `[checks, available]`, or undefined for no row), and hourly ones for the
   * last 24 complete hours (`hourUptime(hoursAgo)`).
   */
  rollups(
    resourceId: number,
    dayUptime: (daysAgo: number) => [number, number] | undefined,
    hourUptime: (hoursAgo: number) => [number, number] | undefined,
    now = Date.now(),
  ): Promise<void> {
    const today = Math.floor(now / DAY) * DAY;
    const hour = Math.floor(now / HOUR) * HOUR;
    return this.#db.transaction(async () => {
      for (let ago = 1; ago <= 89; ago++) {
        const v = dayUptime(ago);
        if (v) await this.#db.query(UPSERT_ROLLUP('check_rollups_daily'), resourceId, today - ago * DAY, v[0], v[1], v[0] * 20, 40);
      }
      for (let ago = 1; ago <= 24; ago++) {
        const v = hourUptime(ago);
        if (v) await this.#db.query(UPSERT_ROLLUP('check_rollups_hourly'), resourceId, hour - ago * HOUR, v[0], v[1], v[0] * 20, 40);
      }
    });
  }

  /**
   * `count` raw checks of one resource in the hour under way (not rolled up yet), evenly spaced up to `now`,
   * every `downEvery`-th one NOT_AVAILABLE (0: none).
   */
  async rawChecks(resourceId: number, count: number, downEvery = 0, now = Date.now()): Promise<void> {
    const hour = Math.floor(now / HOUR) * HOUR;
    if (count === 0) return;
    const outcome = async (status: string, message: string, code: string | null) => {
      await this.#db.query(
        'INSERT INTO check_outcomes (key, status, error_code, message) VALUES (?, ?, ?, ?) ON CONFLICT (key) DO NOTHING',
        outcomeKey(status, code, message),
        status,
        code,
        message,
      );
      const [row] = await this.#db.query<{ id: number }>('SELECT id FROM check_outcomes WHERE key = ?', outcomeKey(status, code, message));
      return row.id;
    };
    const up = await outcome('AVAILABLE', '200 OK', null);
    const down = await outcome('NOT_AVAILABLE', '503 Service Unavailable', '503');
    const params: unknown[] = [];
    for (let i = 0; i < count; i++) {
      const isDown = downEvery > 0 && i % downEvery === downEvery - 1;
      params.push(resourceId, isDown ? down : up, hour + Math.floor(((now - hour) * i) / count), 20);
    }
    const ids = await this.#db.query<{ id: number }>(
      `INSERT INTO check_history (resource_id, outcome_id, checked_at, duration_ms) VALUES ${new Array(count)
        .fill('(?, ?, ?, ?)')
        .join(', ')} RETURNING id`,
      ...params,
    );
    // The hour's first id, as the daemon's writer keeps it (status pages read the hour from there).
    await this.#db.query(
      `INSERT INTO history_hours (hour_start, first_id) VALUES (?, ?) ON CONFLICT (hour_start) DO UPDATE SET
        first_id = CASE WHEN excluded.first_id < history_hours.first_id THEN excluded.first_id ELSE history_hours.first_id END`,
      hour,
      Math.min(...ids.map((r) => Number(r.id))),
    );
  }

  /** An incident row; resolvedAt null while open. Returns its id. */
  async incident(
    resourceId: number,
    openedAt: number,
    resolvedAt: number | null,
    cause: string,
    maintenance = false,
    errorCode = 'CONNECTION_ERROR',
  ): Promise<number> {
    const [row] = await this.#db.query<{ id: number }>(
      `INSERT INTO incidents (subject_type, resource_id, agent_id, opened_at, resolved_at, cause_message, cause_error_code, checks, maintenance)
      VALUES ('resource', ?, NULL, ?, ?, ?, ?, 3, ?) RETURNING id`,
      resourceId,
      openedAt,
      resolvedAt,
      cause,
      errorCode,
      maintenance ? 1 : 0,
    );
    return row.id;
  }

  close(): Promise<void> {
    return this.#db.close();
  }
}
