import { type Static, Type } from '@sinclair/typebox';
import { DateTime, Id, NullableDateTime, PageQuery, StringEnum } from './common.ts';

/**
 * Incidents (docs/API.md#incidents-and-maintenance): the debounced view of checks. A resource opens one
 * after `failureThreshold` consecutive NOT_AVAILABLE checks and resolves it
 * after `successThreshold` consecutive AVAILABLE ones; an agent opens one when
 * it stays DISCONNECTED longer than the daemon's `agentGraceSeconds`.
 */
export const Incident = Type.Object(
  {
    id: Id,
    resourceId: Type.Union([Id, Type.Null()], { description: 'the resource, for a resource incident' }),
    agentId: Type.Union([Id, Type.Null()], { description: 'the tunnel agent, for an agent incident' }),
    openedAt: DateTime,
    resolvedAt: NullableDateTime,
    durationSeconds: Type.Integer({ minimum: 0, description: 'until resolvedAt, or until now while open' }),
    cause: Type.Object(
      {
        message: Type.Union([Type.String(), Type.Null()]),
        errorCode: Type.Union([Type.String(), Type.Null()]),
      },
      { description: 'the first failing check of the streak (resources), or why the agent is down' },
    ),
    checks: Type.Integer({ minimum: 0, description: 'NOT_AVAILABLE checks counted into the incident' }),
    maintenance: Type.Boolean({ description: 'opened inside a maintenance window: it sends nothing' }),
  },
  { title: 'Incident' },
);
export type Incident = Static<typeof Incident>;

export const INCIDENT_STATES = ['open', 'resolved'] as const;

export const IncidentQuery = Type.Object({
  ...PageQuery.properties,
  resourceId: Type.Optional(Id),
  agentId: Type.Optional(Id),
  state: Type.Optional(StringEnum(INCIDENT_STATES)),
});

/** `INCIDENT_OPENED` and `INCIDENT_RESOLVED` on `/api/events`: the incident as `GET /admin/api/incidents/{id}` shows it. */
export const INCIDENT_OPENED = 'INCIDENT_OPENED';
export const INCIDENT_RESOLVED = 'INCIDENT_RESOLVED';
export const IncidentEvent = Incident;
