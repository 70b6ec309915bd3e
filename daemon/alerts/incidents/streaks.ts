import type { ProbeResult } from '../../../src/probes/types.ts';

/** What the engine keeps per resource between checks (columns of `resources`). */
export interface StreakState {
  failStreak: number;
  okStreak: number;
  /** The first failing check of the current failing streak. */
  failSince: number | null;
  failMessage: string | null;
  failErrorCode: string | null;
  openIncidentId: number | null;
}

/** What one resource's results did to its incident. */
export type IncidentStep =
  | { kind: 'open'; at: number; openedAt: number; cause: { message: string | null; errorCode: string | null }; checks: number }
  /** `incidentId` is OPENED_HERE for one opened earlier in the same batch; `checks` is what to add to its count. */
  | { kind: 'resolve'; incidentId: number; at: number; checks: number };

/** The id of an incident opened by an earlier step of the same walk (not inserted yet). */
export const OPENED_HERE = -1;

export interface StreakOutcome {
  state: StreakState;
  /** In check order; usually at most one step per batch, but any sequence is handled. `open.checks` is its final count. */
  steps: IncidentStep[];
  /** NOT_AVAILABLE checks counted into the incident that was open before this batch and is still open after it. */
  extraChecks: number;
}

/**
 * Walks one resource's results in check order. AVAILABLE grows the OK streak
 * and ends the failing one; NOT_AVAILABLE the reverse, and counts into an open
 * incident; UNKNOWN changes nothing. The failing streak reaching
 * `failureThreshold` with no incident open opens one dated at the streak's
 * first failure, with that check's message as cause; the OK streak reaching
 * `successThreshold` with one open resolves it. Pure: the engine writes.
 */
export function walkStreaks(
  start: StreakState,
  thresholds: { failure: number; success: number },
  results: ReadonlyArray<Pick<ProbeResult, 'status' | 'message' | 'errorCode' | 'checkedAt'>>,
): StreakOutcome {
  const s: StreakState = { ...start };
  const steps: IncidentStep[] = [];
  let extraChecks = 0;
  let pending: Extract<IncidentStep, { kind: 'open' }> | undefined;
  for (const r of results) {
    if (r.status === 'AVAILABLE') {
      s.okStreak++;
      s.failStreak = 0;
      s.failSince = null;
      s.failMessage = null;
      s.failErrorCode = null;
      if (s.openIncidentId !== null && s.okStreak >= thresholds.success) {
        // An incident opened in this batch is inserted with its final count: nothing to add.
        const checks = s.openIncidentId === OPENED_HERE ? 0 : extraChecks;
        steps.push({ kind: 'resolve', incidentId: s.openIncidentId, at: r.checkedAt, checks });
        if (s.openIncidentId !== OPENED_HERE) extraChecks = 0;
        s.openIncidentId = null;
        pending = undefined;
      }
    } else if (r.status === 'NOT_AVAILABLE') {
      s.failStreak++;
      s.okStreak = 0;
      if (s.failStreak === 1 || s.failSince === null) {
        s.failSince = r.checkedAt;
        s.failMessage = r.message;
        s.failErrorCode = r.errorCode;
      }
      if (s.openIncidentId !== null) {
        if (s.openIncidentId === OPENED_HERE) pending!.checks++;
        else extraChecks++;
      } else if (s.failStreak >= thresholds.failure) {
        pending = {
          kind: 'open',
          at: r.checkedAt,
          openedAt: s.failSince!,
          checks: s.failStreak,
          cause: { message: s.failMessage, errorCode: s.failErrorCode },
        };
        steps.push(pending);
        s.openIncidentId = OPENED_HERE;
      }
    }
  }
  return { state: s, steps, extraChecks };
}
