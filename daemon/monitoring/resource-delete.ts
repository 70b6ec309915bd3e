import type { Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';
import { stopWatching } from '../alerts/incidents/lifecycle.ts';

/**
 * Deletes resource `id` and what hangs on it in `trx`: the incidents it closed, or false when
 * there is no such resource. The single DELETE and a batch's deletes both come through here.
 */
export async function deleteResourceRows(trx: Transaction<Database>, id: number) {
  const row = await trx.selectFrom('resources').select('id').where('id', '=', id).executeTakeFirst();
  if (!row) return false;
  const incidents = await stopWatching(trx, id, 'deleted');
  // Explicit rather than relying on ON DELETE CASCADE alone: large histories go in one statement.
  await trx.deleteFrom('check_history').where('resource_id', '=', id).execute();
  await trx.deleteFrom('resource_groups').where('resource_id', '=', id).execute();
  await trx.deleteFrom('resource_locations').where('resource_id', '=', id).execute();
  await trx.deleteFrom('location_results').where('resource_id', '=', id).execute();
  await trx.deleteFrom('resources').where('id', '=', id).execute();
  return incidents;
}
