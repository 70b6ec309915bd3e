import type { Selectable } from 'kysely';
import type { Incident } from '../../../src/api/schemas/incidents.ts';
import { formatDateTime, formatNullable } from '../../../src/time.ts';
import type { IncidentsTable } from '../../store/schema.ts';

export type IncidentRow = Selectable<IncidentsTable>;

/** An incident row as the API shows it; an open incident's duration runs until `now`. */
export function toIncident(row: IncidentRow, now = Date.now()): Incident {
  const opened = Number(row.opened_at);
  const end = row.resolved_at === null ? now : Number(row.resolved_at);
  return {
    id: Number(row.id),
    resourceId: row.resource_id === null ? null : Number(row.resource_id),
    agentId: row.agent_id === null ? null : Number(row.agent_id),
    openedAt: formatDateTime(opened),
    resolvedAt: formatNullable(row.resolved_at === null ? null : Number(row.resolved_at)),
    durationSeconds: Math.max(0, Math.floor((end - opened) / 1000)),
    cause: { message: row.cause_message, errorCode: row.cause_error_code },
    checks: Number(row.checks),
    maintenance: Number(row.maintenance) === 1,
  };
}
