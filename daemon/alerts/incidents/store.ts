import type { Transaction } from 'kysely';
import type { Severity } from '../../../src/notifier-fields.ts';
import type { Database } from '../../store/schema.ts';
import { enqueueAlertEvent } from '../alert-events.ts';
import type { AlertKind, IncidentSubject } from '../types.ts';
import type { IncidentRow } from './mappers.ts';

type Trx = Transaction<Database>;

const KINDS: Record<IncidentSubject['type'], { opened: AlertKind; resolved: AlertKind }> = {
  resource: { opened: 'INCIDENT_OPENED', resolved: 'INCIDENT_RESOLVED' },
  agent: { opened: 'AGENT_DOWN', resolved: 'AGENT_UP' },
};

export interface NewIncident {
  subject: IncidentSubject;
  /** Epoch ms: the first failing check of the streak, or when the agent went away. */
  openedAt: number;
  cause: { message: string | null; errorCode: string | null };
  checks: number;
  /** Opened inside a maintenance window: its events are suppressed ('maintenance'). */
  maintenance: boolean;
  /** When the event is recorded (the check that reached the threshold; now for agents). */
  at: number;
  /** A resource's severity now, frozen into the event: a later change does not rewrite it. None for agents (critical). */
  severity?: Severity;
}

/**
 * Inserts an incident and its INCIDENT_OPENED (resources) or AGENT_DOWN
 * (agents) event into the outbox, in the caller's transaction. The caller
 * points the subject's `open_incident_id` at it.
 */
export async function openIncident(trx: Trx, n: NewIncident): Promise<IncidentRow> {
  const row = await trx
    .insertInto('incidents')
    .values({
      subject_type: n.subject.type,
      resource_id: n.subject.type === 'resource' ? n.subject.id : null,
      agent_id: n.subject.type === 'agent' ? n.subject.id : null,
      opened_at: n.openedAt,
      resolved_at: null,
      cause_message: n.cause.message,
      cause_error_code: n.cause.errorCode,
      checks: n.checks,
      maintenance: n.maintenance ? 1 : 0,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await enqueueAlertEvent(
    trx,
    {
      kind: KINDS[n.subject.type].opened,
      subject: n.subject,
      incidentId: Number(row.id),
      openedAt: n.openedAt,
      resolvedAt: null,
      cause: n.cause,
      cert: null,
      ...(n.severity === undefined ? {} : { severity: n.severity }),
    },
    { suppressed: n.maintenance ? 'maintenance' : null, at: n.at },
  );
  return row;
}

/**
 * Resolves an open incident (adding `addChecks` to its count) and enqueues
 * INCIDENT_RESOLVED or AGENT_UP, without a severity: a resolution has its opening's, which the
 * router reads with the opening (routing/subjects.ts) rather than this transaction looking it up. The event is suppressed like the opening one
 * (maintenance), or with `reason` when the subject went away ('deleted',
 * 'deactivated'). Returns undefined when the incident was not open.
 */
export async function resolveIncident(
  trx: Trx,
  incidentId: number,
  subject: IncidentSubject,
  options: { at: number; addChecks?: number; reason?: string },
): Promise<IncidentRow | undefined> {
  const row = await trx
    .updateTable('incidents')
    .set((eb) => ({ resolved_at: options.at, checks: eb('checks', '+', options.addChecks ?? 0) }))
    .where('id', '=', incidentId)
    .where('resolved_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
  if (!row) return undefined;
  const suppressed = options.reason ?? (Number(row.maintenance) === 1 ? 'maintenance' : null);
  await enqueueAlertEvent(
    trx,
    {
      kind: KINDS[subject.type].resolved,
      subject,
      incidentId,
      openedAt: Number(row.opened_at),
      resolvedAt: options.at,
      cause: { message: row.cause_message, errorCode: row.cause_error_code },
      cert: null,
    },
    { suppressed, at: options.at },
  );
  return row;
}
