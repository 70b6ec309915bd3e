import type { PingKind } from '../../src/api/schemas/push.ts';
import { type CheckConditions, judge } from '../../src/probes/check-conditions.ts';
import { needsBody, placeholdersOf, validateConditions } from '../../src/probes/conditions/index.ts';
import { FAILED_RUN } from '../../src/probes/errors.ts';
import type { ProbeResult } from '../probes/types.ts';
import { conditionsOf } from '../probes/resource-conditions.ts';

/** Parsed conditions by their stored text; bounded (push checks rarely have any, and share few texts). */
const parsed = new Map<string, CheckConditions>();
const MAX_PARSED = 10_000;

function conditionsFor(column: string): CheckConditions {
  let hit = parsed.get(column);
  if (hit) return hit;
  const { conditions, problems } = validateConditions(conditionsOf(column), 'PUSH');
  const first = problems[0];
  hit = first
    ? { list: [], needsBody: false, readsStatus: false, problem: `conditions[${first.index}], column ${first.column}: ${first.message}` }
    : {
        list: conditions,
        needsBody: needsBody(conditions),
        readsStatus: conditions.some((c) => placeholdersOf(c).includes('STATUS')),
        problem: null,
      };
  if (parsed.size >= MAX_PARSED) parsed.delete(parsed.keys().next().value!);
  parsed.set(column, hit);
  return hit;
}

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
