import type { PingKind } from '../../src/api/schemas/push.ts';
import { type CheckConditions, judge, parseCheckConditions } from '../../src/probes/check-conditions.ts';
import { LruMap } from '../../src/lru-map.ts';
import { FAILED_RUN } from '../../src/probes/errors.ts';
import type { ProbeResult } from '../probes/types.ts';
import { conditionsOf } from '../probes/resource-conditions.ts';

/** Parsed conditions by their stored text; bounded (push checks rarely have any, and share few texts). */
const parsed = new LruMap<string, CheckConditions>(10_000);

const conditionsFor = (column: string): CheckConditions =>
  parsed.getOrSet(column, () => parseCheckConditions(conditionsOf(column), 'PUSH'));

export interface PingFacts {
  kind: PingKind;
  exitCode: number | null;
  at: number;
  /** A finish after a start: how long the run took. */
  runMs: number | null;
  body: string | null;
  bodyTruncated: boolean;
}

/**
 * What a ping's entry records. A success is AVAILABLE unless the check's conditions fail on it
 * (`[RESPONSE_TIME]` is the run's duration, 0 without a start; `[BODY]` the body); a failure is
 * NOT_AVAILABLE with FAILED_RUN. A start or a log changes no status: its entry shows the check's
 * latest verdict, so that uptime read from the history is not bent by it.
 */
export function pingResult(ping: PingFacts, conditions: string | null, latestCheckStatus: string | null): ProbeResult {
  const base = { durationMs: ping.runMs ?? 0, checkedAt: ping.at };
  if (ping.kind === 'start' || ping.kind === 'log') {
    const status = latestCheckStatus === 'NOT_AVAILABLE' ? 'NOT_AVAILABLE' : 'AVAILABLE';
    return { ...base, status, errorCode: null, message: ping.kind === 'start' ? 'run started' : 'log' };
  }
  if (ping.kind === 'fail') {
    const message = ping.exitCode === null ? 'the run failed' : `the run exited with code ${ping.exitCode}`;
    return { ...base, status: 'NOT_AVAILABLE', errorCode: FAILED_RUN, message };
  }
  const passed = {
    status: 'AVAILABLE' as const,
    errorCode: null,
    message: ping.runMs === null ? 'ping received' : `run finished in ${ping.runMs} ms`,
  };
  if (conditions === null) return { ...base, ...passed };
  const outcome = judge(
    conditionsFor(conditions),
    {
      responseTimeMs: ping.runMs ?? 0,
      body: ping.body ?? '',
      bodyTruncated: ping.bodyTruncated,
      connected: true,
    },
    passed,
  );
  return { ...base, ...outcome };
}
