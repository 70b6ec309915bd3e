import type { Kysely } from 'kysely';
import { hoursWritten, insertHistory, outcomeIds } from '../../../daemon/probes/history-rows.ts';
import type { Database } from '../../../daemon/store/schema.ts';

/** A check as tests write it straight into history (the daemon's own compact writer, chosen times). */
export interface TestCheck {
  resource_id: number;
  status: string;
  message: string | null;
  error_code: string | null;
  checked_at: number;
  duration_ms: number;
  changed?: boolean;
}

/** Writes these checks in order, 200 a transaction, through the writer's history insert. */
export async function writeHistory(db: Kysely<Database>, checks: TestCheck[]): Promise<number[]> {
  const ids: number[] = [];
  const outcomeOf = await outcomeIds(
    db,
    checks.map((c) => ({ status: c.status, errorCode: c.error_code, message: c.message })),
  );
  for (let i = 0; i < checks.length; i += 200) {
    const part = checks.slice(i, i + 200);
    const { ids: written, hours } = await db.transaction().execute((trx) =>
      insertHistory(
        trx,
        db,
        part.map((c) => ({
          resourceId: c.resource_id,
          outcomeId: outcomeOf({ status: c.status, errorCode: c.error_code, message: c.message }),
          checkedAt: c.checked_at,
          durationMs: c.duration_ms,
          changed: c.changed ?? false,
          location: null,
        })),
      ),
    );
    hoursWritten(db, hours);
    ids.push(...written);
  }
  return ids;
}
