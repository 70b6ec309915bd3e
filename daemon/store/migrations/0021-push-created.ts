import type { Kysely } from 'kysely';
import { ms } from './util.ts';

/**
 * `push_checks.created_at`: when a push check began to count, by the daemon's clock (`ctx.clock`,
 * which a test daemon moves forward). A schedule edit before the first ping recomputes the
 * deadline from it; `resources.created_at` is wall time and would put that deadline in the test
 * clock's past. NULL only for rows written before this migration (they fall back to the
 * resource's creation).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('push_checks').addColumn('created_at', ms).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('push_checks').dropColumn('created_at').execute();
}
