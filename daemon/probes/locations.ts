import type { Quorum } from '../../src/probes/quorum.ts';
import type { ProbeResult } from './types.ts';

export { QUORUMS, type Quorum } from '../../src/probes/quorum.ts';

/**
 * Where a resource is checked (docs/API.md#check-locations) and how the locations' results
 * decide its status. Pure: the scheduler runs the checks, the result writer
 * records them.
 */

/** The name the daemon goes by among locations. */
export const DAEMON = 'daemon';

/** A location: the daemon (`agentId` 0) or an agent, with the name results are recorded under. */
export interface Location {
  agentId: number;
  name: string;
}

export const DAEMON_LOCATION: Location = { agentId: 0, name: DAEMON };

/** One location's part of a round. `ran: false`: the location could not check, `result.message` says why. */
export interface LocationCheck {
  location: Location;
  ran: boolean;
  result: ProbeResult;
}

/** The errorCode of a location that could not check. */
export const LOCATION_UNAVAILABLE = 'LOCATION_UNAVAILABLE';

/** Failing locations that make a resource down, out of `total`. */
export function failuresNeeded(quorum: Quorum, total: number): number {
  if (quorum === 'any') return 1;
  if (quorum === 'all') return total;
  return Math.floor(total / 2) + 1;
}

const short = (text: string) => (text.length > 200 ? `${text.slice(0, 199)}…` : text);

/**
 * The resource's status from one round. A location that failed counts towards
 * down; one that could not decide (not checked, or the probe's own UNKNOWN)
 * might go either way. Down when the failures alone reach the quorum's
 * threshold (`any`: one; `majority`: more than half; `all`: every location);
 * up when the failures and the undecided together cannot reach it; unknown
 * otherwise. One location decides alone, its result unchanged.
 */
export function decide(quorum: Quorum, checks: LocationCheck[]): ProbeResult {
  if (checks.length === 1) return checks[0].result;
  let down = 0;
  let undecided = 0;
  for (const c of checks) {
    if (!c.ran || c.result.status === 'UNKNOWN') undecided++;
    else if (c.result.status === 'NOT_AVAILABLE') down++;
  }
  const need = failuresNeeded(quorum, checks.length);
  const status: ProbeResult['status'] = down >= need ? 'NOT_AVAILABLE' : down + undecided < need ? 'AVAILABLE' : 'UNKNOWN';
  const verdict = status === 'AVAILABLE' ? 'up' : status === 'NOT_AVAILABLE' ? 'down' : 'undecided';
  const parts = checks.map(
    (c) =>
      `${c.location.name}: ${!c.ran ? `unknown (${short(c.result.message)})` : c.result.status === 'AVAILABLE' ? 'up' : short(c.result.message)}`,
  );
  const firstDown = checks.find((c) => c.ran && c.result.status === 'NOT_AVAILABLE');
  const firstUnsure = checks.find((c) => !c.ran || c.result.status === 'UNKNOWN');
  const ran = checks.filter((c) => c.ran);
  const certs = ran.map((c) => c.result.certNotAfter).filter((n): n is number => n !== undefined);
  const result: ProbeResult = {
    status,
    message: `${verdict}: down at ${down} of ${checks.length} locations (quorum ${quorum}); ${parts.join('; ')}`,
    errorCode: status === 'AVAILABLE' ? null : status === 'NOT_AVAILABLE' ? firstDown!.result.errorCode : firstUnsure!.result.errorCode,
    durationMs: Math.max(0, ...ran.map((c) => c.result.durationMs)),
    checkedAt: Math.max(...checks.map((c) => c.result.checkedAt)),
  };
  // The certificate that expires first, whichever location saw it.
  if (certs.length) result.certNotAfter = Math.min(...certs);
  return result;
}

/** A location that could not check, as a result: UNKNOWN, with the reason. */
export function notChecked(location: Location, reason: string, at = Date.now()): LocationCheck {
  return {
    location,
    ran: false,
    result: { status: 'UNKNOWN', message: reason, errorCode: LOCATION_UNAVAILABLE, durationMs: 0, checkedAt: at },
  };
}
