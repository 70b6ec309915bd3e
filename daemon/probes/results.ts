import {
  CHECK_COMPLETED,
  type CheckCompleted,
  type CheckStatus,
  type CurrentStatus,
  type HistoryEntry,
  MONITORING_CHANNEL,
  STATUS_CHANGED,
  type StatusChanged,
} from '../../src/api/schemas/monitoring.ts';
import { formatDateTime } from '../../src/time.ts';
import { applyIncidents, ENGINE_COLUMNS, type EngineRow, type IncidentDeps } from '../alerts/incidents/engine.ts';
import type { DaemonContext } from '../context.ts';
import type { Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';
import { DAEMON, type LocationCheck } from './locations.ts';
import type { ProbeResult } from './types.ts';
import { shapedChunks } from '../store/batches.ts';
import { type LatestUpdate, updateLatest } from './latest-update.ts';
import { recordLocationResults } from './location-results.ts';
import { timingColumn } from './check-timing.ts';
import { type PingRecord, pingColumn, pingDetailOf } from './ping-columns.ts';
import { type HistoryRow, hoursWritten, insertHistory, type Outcome, outcomeIds } from './history-rows.ts';

export type { HistoryEntry };

/**
 * One round of checks of one resource: `result` decides its status (the
 * quorum's verdict, daemon/probes/locations.ts); `checks` are the locations'
 * own results, recorded in history. Without `checks`, `result` is the
 * daemon's own check (a resource checked by the daemon alone).
 */
export interface RoundRecord {
  resourceId: number;
  result: ProbeResult;
  checks?: LocationCheck[];
  /** A push check's ping (daemon/push/): stored with its history entry. */
  ping?: PingRecord;
  /**
   * History only (a push check's `start` and `log` pings): the entry is written and published,
   * but the status, the latest columns, streaks and incidents stay as they are.
   */
  historyOnly?: boolean;
  /** The scheduler's next due time for this resource, written with the latest columns (daemon/probes/writer.ts). */
  nextRunAt?: number;
}

/** Rows per statement: a handful of parameters a row stays well under every dialect's bind-parameter limit. */
const MAX_ROWS = 256;

export const CURRENT: Record<ProbeResult['status'], Exclude<CurrentStatus, 'inactive'>> = {
  AVAILABLE: 'available',
  NOT_AVAILABLE: 'not_available',
  UNKNOWN: 'unknown',
};

/**
 * History keeps the seed's two values: a check that could not decide
 * (UNKNOWN) did not show the resource available, so it is NOT_AVAILABLE there;
 * the indecision lives in `currentStatus` (`unknown`). See docs/DECISIONS.md.
 */
export function historyStatus(status: ProbeResult['status']): CheckStatus {
  return status === 'AVAILABLE' ? 'AVAILABLE' : 'NOT_AVAILABLE';
}

/** `currentStatus` as the API shows it: `inactive` whenever the resource is switched off. */
export function effectiveStatus(active: number | boolean, stored: string): CurrentStatus {
  if (!active) return 'inactive';
  return stored === 'available' || stored === 'not_available' ? stored : 'unknown';
}

/** A non-negative whole number of ms; a probe's NaN or negative duration must not fail the batch. */
function millis(value: number): number {
  return Number.isFinite(value) ? Math.max(0, Math.round(value)) : 0;
}

function checkedAt(result: ProbeResult): number {
  return Number.isFinite(result.checkedAt) ? Math.round(result.checkedAt) : Date.now();
}

const chunks = <T>(items: T[]) => shapedChunks(items, MAX_ROWS);

/** A result's outcome as history stores it once. */
function outcome(result: ProbeResult): Outcome {
  return {
    status: historyStatus(result.status),
    errorCode: result.status === 'AVAILABLE' ? null : result.errorCode,
    message: result.message,
  };
}

/**
 * The compact rows of these checks: `changed` where a check's status differs from the resource's
 * previous one (its latest check status before this batch, then the batch's rows in order).
 */
function historyRows(checked: Checked[], current: Map<number, LatestRow>, outcomeOf: (o: Outcome) => number): HistoryRow[] {
  const previous = new Map<number, string | null>();
  return checked.map(({ resourceId, location, result, ping }) => {
    const o = outcome(result);
    const before = previous.has(resourceId) ? previous.get(resourceId) : (current.get(resourceId)?.latest_check_status ?? null);
    previous.set(resourceId, o.status);
    return {
      resourceId,
      outcomeId: outcomeOf(o),
      checkedAt: checkedAt(result),
      durationMs: millis(result.durationMs),
      changed: before !== o.status,
      location: location === DAEMON ? null : location,
      ...(ping ? { ping: pingColumn(ping), pingBody: ping.body } : {}),
    };
  });
}

/** A history row being written: one location's check of one resource. */
interface Checked {
  id: number;
  resourceId: number;
  location: string;
  result: ProbeResult;
  ping?: PingRecord;
}

const LATEST_COLUMNS = [
  'current_status',
  'latest_check_status',
  'latest_message',
  'latest_error_code',
  'latest_duration_ms',
  'latest_timing',
] as const;
type LatestRow = {
  current_status: string;
  latest_check_status: string | null;
  latest_message: string | null;
  latest_error_code: string | null;
  latest_duration_ms: number | null;
  latest_timing: string | null;
};

/** The latest-check columns as they are (the CASE update writes every column of every row). */
function keptLatest(row: EngineRow & LatestRow) {
  return {
    latest_check_status: row.latest_check_status,
    latest_checked_at: row.latest_checked_at === null ? null : Number(row.latest_checked_at),
    latest_message: row.latest_message,
    latest_error_code: row.latest_error_code,
    latest_duration_ms: row.latest_duration_ms === null ? null : Number(row.latest_duration_ms),
    latest_timing: row.latest_timing,
  };
}

/** What the result writer uses of the daemon (the incident engine runs inside it). */
export type ResultWriterDeps = Pick<DaemonContext, 'db'> & IncidentDeps;

/**
 * Decides inside the transaction, before anything is written, which items are recorded: a push
 * deadline is recorded by the pod whose conditional update claimed it, in the same commit, so a
 * deadline is judged once and a crash cannot claim it without recording it.
 */
export type ClaimItems = (trx: Transaction<Database>, items: RoundRecord[]) => Promise<RoundRecord[]>;

/**
 * The result writer: records a batch of probe results in ONE transaction
 * (history rows, each resource's latest_* fields and current_status), skips
 * resources deleted meanwhile, runs the incident engine in the same
 * transaction, and after the commit publishes `CHECK_COMPLETED` per result,
 * `STATUS_CHANGED` where `currentStatus` moved and `INCIDENT_*` where an
 * incident opened or resolved. Returns the history entries of the recorded items, in input order.
 */
export async function recordResults(ctx: ResultWriterDeps, items: RoundRecord[], claim?: ClaimItems): Promise<HistoryEntry[]> {
  if (items.length === 0) return [];
  const ids = [...new Set(items.map((i) => i.resourceId))];
  const outcomeOf = await outcomeIds(ctx.db, items.flatMap((i) => (i.checks ? i.checks.map((c) => c.result) : [i.result])).map(outcome));

  const { recorded, changes, incidents, hours } = await ctx.db.transaction().execute(async (trx) => {
    const current = new Map<number, EngineRow & LatestRow>();
    for (const part of chunks(ids)) {
      const rows = await trx
        .selectFrom('resources')
        .select([...ENGINE_COLUMNS, ...LATEST_COLUMNS])
        .where('id', 'in', part)
        .execute();
      for (const row of rows) current.set(row.id, row);
    }
    const present = items.filter((i) => current.has(i.resourceId));
    const kept = claim && present.length > 0 ? await claim(trx, present) : present;
    if (kept.length === 0) return { recorded: [] as Checked[], changes: [], incidents: undefined, hours: [] };

    // History: each location's check that ran (one that could not check has its `unknown` in location_results only).
    const checked: Checked[] = kept.flatMap(({ resourceId, result, checks, ping }) =>
      checks
        ? checks.filter((c) => c.ran).map((c) => ({ id: 0, resourceId, location: c.location.name, result: c.result }))
        : [{ id: 0, resourceId, location: DAEMON, result, ping }],
    );
    const { ids: historyIds, hours } = await insertHistory(trx, ctx.db, historyRows(checked, current, outcomeOf));
    checked.forEach((c, i) => {
      c.id = historyIds[i];
    });
    // History-only entries (push `start` and `log` pings) end here: no status, streak or incident moves.
    const rounds = kept.filter((i) => !i.historyOnly);
    await recordLocationResults(trx, rounds);

    // The newest round per resource wins; an older one arriving late only adds history.
    const latest = new Map<number, RoundRecord>();
    for (const item of rounds) {
      const seen = latest.get(item.resourceId);
      if (!seen || item.result.checkedAt >= seen.result.checkedAt) latest.set(item.resourceId, item);
    }
    // Streaks, incidents (with their outbox events) and certificate expiry: daemon/alerts/.
    const incidents = await applyIncidents(trx, ctx, current, rounds);
    const changes: StatusChanged[] = [];
    const updates: LatestUpdate[] = [];
    for (const [resourceId, { result, checks, nextRunAt }] of latest) {
      const row = current.get(resourceId)!;
      if (row.latest_checked_at !== null && result.checkedAt < row.latest_checked_at) continue;
      const to = CURRENT[result.status];
      // An undecided round whose locations did not all check keeps the latest verdict's
      // columns (latestCheckStatus stays the seed's two values): only the status turns unknown.
      const verdict = result.status !== 'UNKNOWN' || !checks || (checks.length === 1 && checks[0].ran);
      updates.push({
        id: resourceId,
        current_status: to,
        ...(verdict
          ? {
              latest_check_status: historyStatus(result.status),
              latest_checked_at: checkedAt(result),
              latest_message: result.message,
              latest_error_code: result.status === 'AVAILABLE' ? null : result.errorCode,
              latest_duration_ms: millis(result.durationMs),
              latest_timing: timingColumn(result.timing),
            }
          : keptLatest(row)),
        ...incidents.columns(resourceId),
        next_run_at: nextRunAt === undefined ? null : Math.round(nextRunAt),
      });
      const from = effectiveStatus(row.active, row.current_status);
      const now = effectiveStatus(row.active, to);
      if (from !== now) changes.push({ resourceId, name: row.name, from, to: now, at: formatDateTime(checkedAt(result)) });
    }
    await updateLatest(trx, updates);
    return { recorded: checked, changes, incidents, hours };
  });
  hoursWritten(ctx.db, hours);

  const channel = ctx.events.channel(MONITORING_CHANNEL);
  const entries: HistoryEntry[] = [];
  for (const { id, resourceId, location, result, ping } of recorded) {
    const entry: HistoryEntry = {
      id,
      status: historyStatus(result.status),
      message: result.message,
      errorCode: result.status === 'AVAILABLE' ? null : result.errorCode,
      checkedAt: formatDateTime(checkedAt(result)),
      durationMs: millis(result.durationMs),
      location,
    };
    const detail = ping && pingDetailOf(pingColumn(ping), ping.body);
    entries.push(detail ? { ...entry, ping: detail } : entry);
    // Events carry no ping: its source and body are for administrators' reads only.
    const event: CheckCompleted = { resourceId, historyId: id, ...withoutId(entry) };
    channel.publish(CHECK_COMPLETED, event);
  }
  for (const change of changes) channel.publish(STATUS_CHANGED, change);
  incidents?.publish();
  return entries;
}

function withoutId(entry: HistoryEntry): Omit<HistoryEntry, 'id'> {
  const { id: _id, ...rest } = entry;
  return rest;
}
