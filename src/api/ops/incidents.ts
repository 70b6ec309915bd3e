import { Type } from '@sinclair/typebox';
import { defineOperation } from '../operation.ts';
import { Deleted, IdParams } from '../schemas/common.ts';
import { Incident, IncidentQuery } from '../schemas/incidents.ts';
import { MaintenanceCreate, MaintenanceUpdate, MaintenanceWindow } from '../schemas/maintenance.ts';

const incidents = 'Incidents';
const maintenance = 'Maintenance';

/** Incidents and maintenance windows (docs/API.md#incidents-and-maintenance), ADMIN only. */
export const incidentOperations = {
  listIncidents: defineOperation({
    id: 'listIncidents',
    method: 'GET',
    path: '/admin/api/incidents',
    tag: incidents,
    access: 'admin',
    summary: 'Incidents of resources and agents, most recent first',
    description:
      'Filter with `resourceId`, `agentId` and `state` (`open` or `resolved`). Paged like check history: `limit` and `before` (an incident id), with a `Link: <…>; rel="next"` header while more remain.',
    query: IncidentQuery,
    response: Type.Array(Incident),
  }),
  getIncident: defineOperation({
    id: 'getIncident',
    method: 'GET',
    path: '/admin/api/incidents/{id}',
    tag: incidents,
    access: 'admin',
    summary: 'One incident',
    params: IdParams,
    response: Incident,
    errors: [404],
  }),
  listMaintenanceWindows: defineOperation({
    id: 'listMaintenanceWindows',
    method: 'GET',
    path: '/admin/api/maintenance',
    tag: maintenance,
    access: 'admin',
    summary: 'Maintenance windows, by id',
    description: 'Each with `activeNow` and its opening in progress or next (`nextStart`, `nextEnd`).',
    response: Type.Array(MaintenanceWindow),
  }),
  getMaintenanceWindow: defineOperation({
    id: 'getMaintenanceWindow',
    method: 'GET',
    path: '/admin/api/maintenance/{id}',
    tag: maintenance,
    access: 'admin',
    summary: 'One maintenance window',
    params: IdParams,
    response: MaintenanceWindow,
    errors: [404],
  }),
  createMaintenanceWindow: defineOperation({
    id: 'createMaintenanceWindow',
    method: 'POST',
    path: '/admin/api/maintenance',
    tag: maintenance,
    access: 'admin',
    summary: 'Create a maintenance window',
    description:
      '`ONE_OFF` takes `startsAt` and `endsAt`; `WEEKLY` takes `days`, `startTime`, `durationMinutes` and `timeZone` (IANA). Targets: `resourceIds`, `groupIds` (their resources) and `agentIds`, at least one. Names are unique (409).',
    body: MaintenanceCreate,
    response: MaintenanceWindow,
    errors: [409],
  }),
  updateMaintenanceWindow: defineOperation({
    id: 'updateMaintenanceWindow',
    method: 'PUT',
    path: '/admin/api/maintenance/{id}',
    tag: maintenance,
    access: 'admin',
    summary: 'Change a maintenance window',
    description: 'Fields left out keep their value; changing `kind` drops the fields of the old kind and needs those of the new one.',
    params: IdParams,
    body: MaintenanceUpdate,
    response: MaintenanceWindow,
    errors: [404, 409],
  }),
  deleteMaintenanceWindow: defineOperation({
    id: 'deleteMaintenanceWindow',
    method: 'DELETE',
    path: '/admin/api/maintenance/{id}',
    tag: maintenance,
    access: 'admin',
    summary: 'Delete a maintenance window',
    params: IdParams,
    response: Deleted,
    errors: [404],
  }),
} as const;
