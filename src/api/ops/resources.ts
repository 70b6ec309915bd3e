import { Type } from '@sinclair/typebox';
import { defineOperation } from '../operation.ts';
import { Deleted, IdParams } from '../schemas/common.ts';
import {
  AdminResource, AdminResourceDetail, HistoryEntry, HistoryQuery, Resource, ResourceCreate, ResourceDetail, ResourceListItem, ResourcePatch,
} from '../schemas/monitoring.ts';

const tag = 'Resources';

/** Resources, their checks and history (docs/API.md#resources). */
export const resourceOperations = {
  listResources: defineOperation({
    id: 'listResources', method: 'GET', path: '/api/resources', tag, access: 'public',
    summary: 'List the active resources the caller may see',
    description: 'Ordered by id ascending. Anonymous callers see resources without a group or with a PUBLIC group; authenticated callers also AUTHENTICATED ones; HIDDEN resources are never listed. Each item also carries `currentStatus`, `latestCheckStatus` and `latestCheckedAt`, as in the detail.',
    response: Type.Array(ResourceListItem),
  }),
  getResource: defineOperation({
    id: 'getResource', method: 'GET', path: '/api/resources/{id}', tag, access: 'public',
    summary: 'One resource with its groups and latest check',
    description: '404 when the resource does not exist or is not visible to the caller.',
    params: IdParams, response: ResourceDetail, errors: [404],
  }),
  createResource: defineOperation({
    id: 'createResource', method: 'POST', path: '/api/resources', tag, access: 'admin',
    summary: 'Create a resource', description: 'Names are unique (409). A new active resource is checked soon.',
    body: ResourceCreate, response: Resource, errors: [409],
  }),
  updateResource: defineOperation({
    id: 'updateResource', method: 'PATCH', path: '/api/resources/{id}', tag, access: 'admin',
    summary: 'Change some fields of a resource', description: '`groupIds` replaces the resource\'s groups.',
    params: IdParams, body: ResourcePatch, response: AdminResource, errors: [404, 409],
  }),
  deleteResource: defineOperation({
    id: 'deleteResource', method: 'DELETE', path: '/api/resources/{id}', tag, access: 'admin',
    summary: 'Delete a resource and its check history', params: IdParams, response: Deleted, errors: [404],
  }),
  checkResource: defineOperation({
    id: 'checkResource', method: 'POST', path: '/api/resources/{id}/check', tag, access: 'admin',
    summary: 'Run a check now',
    description: 'Checks at every location of the resource, records the results like a scheduled check and returns the history entry of the first location that checked. 503 when no location could check (its agents disconnected or too old).',
    params: IdParams, response: HistoryEntry, errors: [404, 503],
  }),
  getResourceHistory: defineOperation({
    id: 'getResourceHistory', method: 'GET', path: '/api/resources/{id}/history', tag, access: 'authenticated',
    summary: 'Check history, most recent first',
    description: 'Paged with `limit` and `before` (an entry id); a `Link: <…>; rel="next"` header points to the next page. 404 for a missing resource or one the caller may not see (ADMIN sees all).',
    params: IdParams, query: HistoryQuery, response: Type.Array(HistoryEntry), errors: [404],
  }),
  listAdminResources: defineOperation({
    id: 'listAdminResources', method: 'GET', path: '/admin/api/resources', tag, access: 'admin',
    summary: 'Every resource, inactive and hidden included, by id', response: Type.Array(AdminResource),
  }),
  getAdminResource: defineOperation({
    id: 'getAdminResource', method: 'GET', path: '/admin/api/resources/{id}', tag, access: 'admin',
    summary: 'Any resource, with its interval, alerting settings and recent incidents', params: IdParams, response: AdminResourceDetail, errors: [404],
  }),
  monitoringEvents: defineOperation({
    id: 'monitoringEvents', method: 'GET', path: '/api/events', tag, access: 'authenticated', stream: true,
    summary: 'Live check results (SSE)',
    description: 'Starts with `SNAPSHOT` ({resources: [...]}) unless `Last-Event-ID` can be replayed, then `CHECK_COMPLETED` and `STATUS_CHANGED` for the resources the caller may see (ADMIN: all). `INCIDENT_OPENED` and `INCIDENT_RESOLVED` carry an incident (the `Incident` schema, as `GET /admin/api/incidents/{id}` returns it) with the same visibility; incidents of tunnel agents go to ADMIN only.',
  }),
} as const;
