import type { Transaction } from 'kysely';
import type { LocationCheck } from './locations.ts';
import type { ProbeResult } from './types.ts';
import { shapedChunks } from '../store/batches.ts';
import type { Database } from '../store/schema.ts';
import { timingColumn } from './check-timing.ts';

/** Rows per statement: 8 parameters a row. */
const MAX_ROWS = 64;

const STATUS: Record<ProbeResult['status'], string> = { AVAILABLE: 'available', NOT_AVAILABLE: 'not_available', UNKNOWN: 'unknown' };

/**
 * The latest result of each location (docs/API.md#check-locations), for resources checked
 * anywhere but the daemon alone (the daemon-only case is the resource's own
 * latest-check columns). A location that could not check is `unknown`, with
 * the reason as its message. One upsert per chunk, newest round per location;
 * a round that arrives after a newer one was recorded (a scheduled round
 * batched by the writer, a check-now written at once) leaves the newer row.
 */
export async function recordLocationResults(
  trx: Transaction<Database>,
  rounds: ReadonlyArray<{ resourceId: number; checks?: LocationCheck[] }>,
): Promise<void> {
  const latest = new Map<string, { resourceId: number; check: LocationCheck }>();
  for (const { resourceId, checks } of rounds) {
    if (!checks || (checks.length === 1 && checks[0].location.agentId === 0)) continue;
    for (const check of checks) {
      const key = `${resourceId}:${check.location.agentId}`;
      const seen = latest.get(key);
      // One row per key and statement: PostgreSQL refuses to update a row twice in one upsert.
      if (!seen || check.result.checkedAt >= seen.check.result.checkedAt) latest.set(key, { resourceId, check });
    }
  }
  for (const part of shapedChunks([...latest.values()], MAX_ROWS)) {
    await trx
      .insertInto('location_results')
      .values(
        part.map(({ resourceId, check: { location, ran, result } }) => ({
          resource_id: resourceId,
          agent_id: location.agentId,
          status: ran ? STATUS[result.status] : 'unknown',
          message: result.message,
          error_code: result.status === 'AVAILABLE' ? null : result.errorCode,
          checked_at: Math.round(result.checkedAt),
          duration_ms: Math.max(0, Math.round(result.durationMs) || 0),
          timing: ran ? timingColumn(result.timing) : null,
        })),
      )
      .onConflict((oc) =>
        oc
          .columns(['resource_id', 'agent_id'])
          .doUpdateSet((eb) => ({
            status: eb.ref('excluded.status'),
            message: eb.ref('excluded.message'),
            error_code: eb.ref('excluded.error_code'),
            checked_at: eb.ref('excluded.checked_at'),
            duration_ms: eb.ref('excluded.duration_ms'),
            timing: eb.ref('excluded.timing'),
          }))
          .where((eb) => eb('location_results.checked_at', '<=', eb.ref('excluded.checked_at'))),
      )
      .execute();
  }
}
