import { UPSIDE_DOWN } from './errors.ts';
import type { ProbeResult } from './types.ts';

type Outcome = Omit<ProbeResult, 'durationMs' | 'checkedAt'>;

/**
 * An upside-down resource's verdict: AVAILABLE exactly when the check would otherwise fail. The
 * message says so and keeps what was seen (`upside down: CONNECTION_ERROR connect ECONNREFUSED …`,
 * `upside down: the check passed (200 OK)`); UNKNOWN (the check could not decide) stays UNKNOWN.
 */
export function upsideDown(outcome: Outcome): Outcome {
  if (outcome.status === 'UNKNOWN') return outcome;
  if (outcome.status === 'AVAILABLE')
    return { ...outcome, status: 'NOT_AVAILABLE', message: `upside down: the check passed (${outcome.message})`, errorCode: UPSIDE_DOWN };
  const code = outcome.errorCode;
  // An HTTP status's message already starts with its code (`503 Service Unavailable`).
  const seen = code && !outcome.message.startsWith(code) ? `${code} ${outcome.message}` : outcome.message;
  return { ...outcome, status: 'AVAILABLE', message: `upside down: ${seen}`, errorCode: null };
}
