import { type Selectable, sql, type Transaction } from 'kysely';
import type { DaemonConfig } from '../../config.ts';
import type { DaemonContext } from '../../context.ts';
import type { ProbeResult } from '../../../src/probes/types.ts';
import { shapedChunks } from '../../store/batches.ts';
import type { Database, ResourcesTable } from '../../store/schema.ts';
import { enqueueAlertEvent, severityOf } from '../alert-events.ts';
import type { IncidentSubject } from '../types.ts';
import { certStep } from './cert-expiry.ts';
import { type IncidentChange, publishIncidents } from './events.ts';
import { openIncident, resolveIncident } from './store.ts';
import { OPENED_HERE, type StreakState, walkStreaks } from './streaks.ts';

/** The columns of `resources` the engine reads; the result writer selects them with its own. */
export const ENGINE_COLUMNS = [
  'id',
  'name',
  'target',
  'active',
  'latest_checked_at',
  'failure_threshold',
  'success_threshold',
  'fail_streak',
  'ok_streak',
  'fail_since',
  'fail_message',
  'fail_error_code',
  'open_incident_id',
  'cert_expires_at',
  'cert_alerted_days',
  'severity',
] as const satisfies ReadonlyArray<keyof ResourcesTable>;

export type EngineRow = Pick<Selectable<ResourcesTable>, (typeof ENGINE_COLUMNS)[number]>;

/** What the engine writes back to `resources`, with the latest-check columns, in the writer's one UPDATE per chunk. */
export interface AlertColumns {
  fail_streak: number;
  ok_streak: number;
  fail_since: number | null;
  fail_message: string | null;
  fail_error_code: string | null;
  open_incident_id: number | null;
  cert_expires_at: number | null;
  cert_alerted_days: number | null;
}

export interface IncidentOutcome {
  /** The alert columns of a resource after this batch (its current values when nothing changed). */
  columns(resourceId: number): AlertColumns;
  /** After commit: INCIDENT_OPENED / INCIDENT_RESOLVED on the monitoring channel. */
  publish(): void;
}

const stateOf = (row: EngineRow): StreakState => ({
  failStreak: Number(row.fail_streak),
  okStreak: Number(row.ok_streak),
  failSince: row.fail_since === null ? null : Number(row.fail_since),
  failMessage: row.fail_message,
  failErrorCode: row.fail_error_code,
  openIncidentId: row.open_incident_id === null ? null : Number(row.open_incident_id),
});

function columnsOf(row: EngineRow): AlertColumns {
  const s = stateOf(row);
  return {
    fail_streak: s.failStreak,
    ok_streak: s.okStreak,
    fail_since: s.failSince,
    fail_message: s.failMessage,
    fail_error_code: s.failErrorCode,
    open_incident_id: s.openIncidentId,
    cert_expires_at: row.cert_expires_at === null ? null : Number(row.cert_expires_at),
    cert_alerted_days: row.cert_alerted_days === null ? null : Number(row.cert_alerted_days),
  };
}

const subjectOf = (row: EngineRow): IncidentSubject => ({ type: 'resource', id: Number(row.id), name: row.name, target: row.target });

/** What the incident engine uses of the daemon. */
export type IncidentDeps = Pick<DaemonContext, 'events' | 'bus' | 'maintenance'> & { config: Pick<DaemonConfig, 'incidents'> };

/**
 * The incident engine, run inside the result writer's transaction: per active
 * resource, its new results in check order move the streaks, open or resolve
 * its incident (with the outbox event in the same transaction), count failing
 * checks into an open incident, and follow the HTTPS certificate's expiry.
 * Statements: none for a resource whose incident state does not change (its
 * columns ride on the writer's UPDATE), one per 64 open incidents to count
 * checks, two per incident opened or resolved, one per CERT_EXPIRING.
 */
export async function applyIncidents(
  trx: Transaction<Database>,
  ctx: IncidentDeps,
  rows: ReadonlyMap<number, EngineRow>,
  items: ReadonlyArray<{ resourceId: number; result: ProbeResult }>,
): Promise<IncidentOutcome> {
  const byResource = new Map<number, ProbeResult[]>();
  for (const { resourceId, result } of items) {
    const row = rows.get(resourceId);
    if (!row?.active) continue; // an inactive resource has no incidents (docs/DECISIONS.md)
    if (row.latest_checked_at !== null && result.checkedAt < Number(row.latest_checked_at)) continue; // late: history only
    const list = byResource.get(resourceId) ?? [];
    list.push(result);
    byResource.set(resourceId, list);
  }
  const changed = new Map<number, AlertColumns>();
  const changes: IncidentChange[] = [];
  const countChecks: Array<{ id: number; add: number }> = [];
  const thresholds = ctx.config.incidents.certExpiryDays;

  for (const [resourceId, results] of byResource) {
    const row = rows.get(resourceId)!;
    results.sort((a, b) => a.checkedAt - b.checkedAt);
    const walk = walkStreaks(stateOf(row), { failure: Number(row.failure_threshold), success: Number(row.success_threshold) }, results);
    let openId = walk.state.openIncidentId;
    let lastOpened: number | undefined;
    for (const step of walk.steps) {
      if (step.kind === 'open') {
        const maintenance = await inMaintenance(trx, ctx, resourceId, step.at);
        const incident = await openIncident(trx, {
          subject: subjectOf(row),
          openedAt: step.openedAt,
          cause: step.cause,
          checks: step.checks,
          maintenance,
          at: step.at,
          severity: severityOf(row.severity),
        });
        lastOpened = Number(incident.id);
        changes.push({ kind: 'opened', row: incident });
      } else {
        const id = step.incidentId === OPENED_HERE ? lastOpened! : step.incidentId;
        const incident = await resolveIncident(trx, id, subjectOf(row), { at: step.at, addChecks: step.checks });
        if (incident) changes.push({ kind: 'resolved', row: incident });
      }
    }
    if (openId === OPENED_HERE) openId = lastOpened!;
    else if (openId !== null && walk.extraChecks > 0) countChecks.push({ id: openId, add: walk.extraChecks });

    const columns: AlertColumns = {
      ...columnsOf(row),
      fail_streak: walk.state.failStreak,
      ok_streak: walk.state.okStreak,
      fail_since: walk.state.failSince,
      fail_message: walk.state.failMessage,
      fail_error_code: walk.state.failErrorCode,
      open_incident_id: openId,
    };
    const certSeen = results.findLast((r) => r.certNotAfter !== undefined);
    if (certSeen) {
      const before = { expiresAt: columns.cert_expires_at, alertedDays: columns.cert_alerted_days };
      const { state, fire } = certStep(before, certSeen.certNotAfter!, certSeen.checkedAt, thresholds);
      columns.cert_expires_at = state.expiresAt;
      columns.cert_alerted_days = state.alertedDays;
      if (fire !== undefined) {
        await enqueueAlertEvent(
          trx,
          {
            kind: 'CERT_EXPIRING',
            subject: subjectOf(row),
            incidentId: null,
            openedAt: null,
            resolvedAt: null,
            cause: null,
            cert: { notAfter: state.expiresAt!, thresholdDays: fire },
            severity: severityOf(row.severity),
          },
          { at: certSeen.checkedAt },
        );
      }
    }
    changed.set(resourceId, columns);
  }
  await addChecks(trx, countChecks);

  return {
    columns: (id) => changed.get(id) ?? columnsOf(rows.get(id)!),
    publish: () => publishIncidents(ctx, changes),
  };
}

/** The maintenance cache is read once per daemon, and only when an incident opens. */
async function inMaintenance(trx: Transaction<Database>, ctx: IncidentDeps, resourceId: number, at: number): Promise<boolean> {
  const cache = ctx.maintenance;
  await cache.ready(trx);
  return cache.resourceInMaintenance(resourceId, at);
}

/** `checks = checks + CASE id WHEN … END` for many open incidents, one statement per chunk. */
async function addChecks(trx: Transaction<Database>, list: Array<{ id: number; add: number }>): Promise<void> {
  for (const part of shapedChunks(list, 64)) {
    const add = sql<number>`CASE ${sql.ref('id')} ${sql.join(
      part.map((p) => sql`WHEN ${p.id} THEN CAST(${p.add} AS bigint)`),
      sql` `,
    )} END`;
    await trx
      .updateTable('incidents')
      .set((eb) => ({ checks: eb('checks', '+', add) }))
      .where(
        'id',
        'in',
        part.map((p) => p.id),
      )
      .execute();
  }
}
