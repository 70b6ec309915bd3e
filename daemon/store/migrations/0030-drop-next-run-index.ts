import type { Kysely } from 'kysely';

/**
 * Drops `resources_next_run` (`active`, `next_run_at`). No query reads by it: the scheduler keeps
 * due times in memory and reads `next_run_at` by id. It cost an index write on every check, and
 * without statistics SQLite took `active = ?` as selective and planned through it every query on
 * active resources, walking all of them: a page of `GET /api/resources`, the scheduler's start, a
 * status page's members (0.04–0.2 s each at 200,000 resources; docs/DECISIONS.md, "Join order on
 * SQLite").
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('resources_next_run').ifExists().execute();
}
