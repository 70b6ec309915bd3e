/**
 * What the protocol checks (DNS, PING, TLS, UDP, GRPC, WEBSOCKET, SSH; docs/API.md#check-types)
 * share: one signature, so that the runner's switch stays one line per type, and one way of
 * reading conditions, so that every type reports them as HTTP and TCP do.
 */
import { type CheckConditions, judge } from './check-conditions.ts';
import { type Observation, placeholdersOf } from './conditions/index.ts';
import type { PlaceholderName } from './conditions/types.ts';
import type { ProbeResult } from './types.ts';

export type Outcome = Omit<ProbeResult, 'durationMs' | 'checkedAt'>;

export interface ProtocolProbeContext {
  /** The whole check's timeout: every phase (lookup, connect, handshake, answer) fits in it. */
  timeoutMs: number;
  /** The resource's parsed conditions; null: the type's own verdict alone. */
  conditions: CheckConditions | null;
  /** Fill `report` (`POST /admin/api/resources/test`). */
  report: boolean;
  /** Do not verify the peer certificate (TLS, GRPC over TLS, wss). */
  skipTLS: boolean;
}

/** One protocol check of one target; never throws (a failure is NOT_AVAILABLE with its code). */
export type ProtocolProbe<O> = (target: string, options: O, ctx: ProtocolProbeContext) => Promise<Outcome>;

/**
 * The verdict once the check is over, with the conditions read as HTTP reads them:
 * - `reached` false (CONNECTION_ERROR, a timeout): `outcome` stands; a report still shows each
 *   condition against what was seen ([CONNECTED] false).
 * - `outcome` AVAILABLE: the conditions must all hold, else CONDITION_FAILED.
 * - `outcome` a protocol failure (DNS_ERROR, PING_FAILED, GRPC_ERROR, …): it stands, unless a
 *   condition reads `decides`, the placeholder that states it (`[DNS_RCODE] == NXDOMAIN`): then the
 *   conditions alone decide, as `[STATUS] == 401` does for HTTP.
 */
export function conclude(
  ctx: ProtocolProbeContext,
  outcome: Outcome,
  observation: Observation,
  reached: boolean,
  decides?: PlaceholderName,
): Outcome {
  const outcomes = ctx.report ? ([] as NonNullable<ProbeResult['report']>['conditions']) : undefined;
  let verdict = outcome;
  const conditions = ctx.conditions;
  if (conditions && (reached || outcomes)) {
    const overrides =
      outcome.status === 'AVAILABLE' || (decides !== undefined && conditions.list.some((c) => placeholdersOf(c).includes(decides)));
    const base: Outcome = overrides ? { ...outcome, status: 'AVAILABLE', errorCode: null } : outcome;
    const judged = judge(conditions, observation, base, outcomes);
    if (reached && overrides) verdict = judged;
  }
  return outcomes ? { ...verdict, report: { conditions: outcomes, response: null } } : verdict;
}
