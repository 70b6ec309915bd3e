import { formatGoDuration } from '../../src/probes/conditions/go-values.ts';
import type { ProbeResult } from '../probes/types.ts';
import type { DeadlineRow } from './deadline-store.ts';

export const MISSED_PING = 'MISSED_PING';

/** `2027-03-28T01:00:00Z`: UTC with its zone, so that the message reads the same on every pod and page. */
const utc = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * Why a check is late, in words its owner understands: a run that started and did not finish in
 * time, or no ping by the expected time plus grace (the deadline minus the grace is the time the
 * schedule expected a ping: daemon/push/schedule.ts puts the grace last).
 */
export function missedMessage(row: DeadlineRow): string {
  const graceMs = row.graceSeconds * 1000;
  const grace = formatGoDuration(graceMs);
  if (row.startedAt !== null && row.startedAt + graceMs === row.lateAt) {
    return `started at ${utc(row.startedAt)}, did not finish within the ${grace} grace`;
  }
  const since = row.lastPingAt === null ? 'no ping yet' : `no ping since ${utc(row.lastPingAt)}`;
  return `${since}; expected by ${utc(row.lateAt - graceMs)} plus ${grace} grace`;
}

/** The NOT_AVAILABLE result recorded for a missed deadline, at `at` (when it was judged). */
export function missedResult(row: DeadlineRow, at: number): ProbeResult {
  return { status: 'NOT_AVAILABLE', message: missedMessage(row), errorCode: MISSED_PING, durationMs: 0, checkedAt: at };
}
