import { type Kysely, sql } from 'kysely';

/**
 * PostgreSQL enforces varchar(n) lengths, SQLite never did: a value the API
 * (or an agent, or a client's request line in the route log) lets through
 * longer than its column would be a 500 on one backend and fine on the other.
 * Every varchar column becomes text (binary-compatible: no table rewrite);
 * the API's schemas keep bounding what users send.
 */
export async function widenVarcharColumns(db: Kysely<any>): Promise<void> {
  const { rows } = await sql<{ table_name: string; column_name: string }>`
    SELECT table_name, column_name FROM information_schema.columns
    WHERE table_schema = current_schema() AND data_type = 'character varying' AND table_name NOT LIKE 'kysely_%'
    ORDER BY table_name, column_name`.execute(db);
  for (const { table_name: table, column_name: column } of rows) {
    await sql`ALTER TABLE ${sql.table(table)} ALTER COLUMN ${sql.ref(column)} TYPE text`.execute(db);
  }
}

/** The tables whose changes pods' caches follow, and the statements that change what those caches hold. */
export const WATCHED_TABLES: ReadonlyArray<[table: string, events: string]> = [
  ['cors_origins', 'INSERT OR UPDATE OR DELETE OR TRUNCATE'],
  ['groups', 'INSERT OR UPDATE OR DELETE OR TRUNCATE'],
  ['resource_groups', 'INSERT OR UPDATE OR DELETE OR TRUNCATE'],
  // Check results update resources all the time; the bus relay carries edits. Creations and deletions change visibility.
  ['resources', 'INSERT OR DELETE OR TRUNCATE'],
  ['routes', 'INSERT OR UPDATE OR DELETE OR TRUNCATE'],
  ['status_pages', 'INSERT OR UPDATE OR DELETE OR TRUNCATE'],
  ['announcements', 'INSERT OR UPDATE OR DELETE OR TRUNCATE'],
  ['maintenance_windows', 'INSERT OR UPDATE OR DELETE OR TRUNCATE'],
  ['alert_rules', 'INSERT OR UPDATE OR DELETE OR TRUNCATE'],
];

/**
 * Statement-level triggers that NOTIFY `monctl_tables` with the table's name
 * when a transaction changing it commits (NOTIFY is transactional, and
 * repeated payloads in one transaction arrive once). Every pod's caches
 * follow their tables this way, whoever wrote: a pod, `copy-data`, an operator.
 */
export async function notifyTableChanges(db: Kysely<any>, tables = WATCHED_TABLES): Promise<void> {
  await sql`CREATE OR REPLACE FUNCTION monctl_table_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN PERFORM pg_notify('monctl_tables', TG_TABLE_NAME); RETURN NULL; END $$`.execute(db);
  for (const [table, events] of tables) {
    await sql`CREATE TRIGGER ${sql.raw(`monctl_${table}_changed`)} AFTER ${sql.raw(events)} ON ${sql.table(table)}
      FOR EACH STATEMENT EXECUTE FUNCTION monctl_table_changed()`.execute(db);
  }
}
