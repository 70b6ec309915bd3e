import { type Kysely, sql } from 'kysely';
import { restartHistoryIds } from '../dialect/history-size.ts';
import { outcomeKey } from '../outcome-key.ts';
import { isPostgres, ms, withId } from './util.ts';

/** Old rows copied per statement: bounded statements, whatever the table's size. */
const CHUNK = 20_000;
const HOUR = 3_600_000;

/**
 * Compact check history (docs/DECISIONS.md#compact-check-history-and-its-size-budget):
 * - `check_outcomes`: each distinct (status, error_code, message) once, found by `key`
 *   (a hash of the three: any message length fits a unique index on both dialects);
 * - `check_history`: `outcome_id` instead of the three columns; `changed` = 1 where the status
 *   differs from the resource's previous check; ONE index, (resource_id, id);
 * - `check_details`: `location`, `ping` and `ping_body`, for the rows that have any (agents' checks, pings);
 * - `history_hours`: the first id written for each hour, so that a time range reads as an id range.
 * Existing rows are copied in id chunks with their ids (history ids are in the API and events).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('check_outcomes'))
    .addColumn('key', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('error_code', 'varchar(32)')
    .addColumn('message', 'text')
    .execute();
  await db.schema
    .createTable('history_hours')
    .addColumn('hour_start', ms, (c) => c.primaryKey())
    .addColumn('first_id', ms, (c) => c.notNull())
    .execute();

  await db.schema.dropIndex('check_history_checked_at').execute();
  await db.schema.dropIndex('check_history_resource_checked').execute();
  await db.schema.alterTable('check_history').renameTo('check_history_old').execute();
  await withId(db, db.schema.createTable('check_history'))
    .addColumn('resource_id', 'integer', (c) => c.notNull().references('resources.id').onDelete('cascade'))
    .addColumn('outcome_id', 'integer', (c) => c.notNull())
    .addColumn('checked_at', ms, (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('changed', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  // The rare columns apart (a NULL still costs a header byte a row): an agent's checks, push pings.
  await db.schema
    .createTable('check_details')
    .addColumn('history_id', isPostgres(db) ? 'bigint' : 'integer', (c) =>
      c.primaryKey().references('check_history.id').onDelete('cascade'),
    )
    .addColumn('location', 'varchar(64)')
    .addColumn('ping', 'text')
    .addColumn('ping_body', 'text')
    .execute();

  const distinct = await db.selectFrom('check_history_old').select(['status', 'error_code', 'message']).distinct().execute();
  for (let i = 0; i < distinct.length; i += 500) {
    await db
      .insertInto('check_outcomes')
      .values(distinct.slice(i, i + 500).map((o) => ({ ...o, key: outcomeKey(o.status, o.error_code, o.message) })))
      .execute();
  }
  const bounds = await db
    .selectFrom('check_history_old')
    .select((eb) => [eb.fn.min('id').as('lo'), eb.fn.max('id').as('hi')])
    .executeTakeFirst();
  if (bounds?.lo != null) {
    for (let lo = Number(bounds.lo); lo <= Number(bounds.hi); lo += CHUNK) {
      await sql`
        INSERT INTO check_history (id, resource_id, outcome_id, checked_at, duration_ms, changed)
        SELECT o.id, o.resource_id, c.id, o.checked_at, o.duration_ms,
          CASE WHEN (SELECT p.status FROM check_history_old p WHERE p.resource_id = o.resource_id AND p.id < o.id
                     ORDER BY p.id DESC LIMIT 1) = o.status THEN 0 ELSE 1 END
        FROM check_history_old o
        JOIN check_outcomes c ON c.status = o.status AND c.error_code IS NOT DISTINCT FROM o.error_code
          AND c.message IS NOT DISTINCT FROM o.message
        WHERE o.id >= ${lo} AND o.id < ${lo + CHUNK}`.execute(db);
    }
  }
  await sql`
    INSERT INTO check_details (history_id, location, ping, ping_body)
    SELECT id, location, ping, ping_body FROM check_history_old
    WHERE location IS NOT NULL OR ping IS NOT NULL OR ping_body IS NOT NULL`.execute(db);
  await sql`
    INSERT INTO history_hours (hour_start, first_id)
    SELECT checked_at - checked_at % ${sql.lit(HOUR)}, min(id) FROM check_history GROUP BY checked_at - checked_at % ${sql.lit(HOUR)}`.execute(
    db,
  );
  await restartHistoryIds(db);
  await db.schema.dropTable('check_history_old').execute();
  // Built once the rows are in (faster than row by row); the old table's index of that name went with it.
  await db.schema.createIndex('check_history_resource').on('check_history').columns(['resource_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  void db;
  throw new Error('0029-compact-history cannot be undone: restore a backup taken before it');
}
