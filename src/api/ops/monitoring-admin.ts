import { Type } from '@sinclair/typebox';
import { defineOperation } from '../operation.ts';
import { Deleted, IdParams } from '../schemas/common.ts';
import { Group, GroupBody } from '../schemas/monitoring.ts';
import {
  CorsOriginAdded, CorsOriginBody, CorsOriginQuery, CorsOrigins, RegistryCredential, RegistryCredentialCreate,
} from '../schemas/monitoring-settings.ts';

const groups = 'Groups';
const settings = 'Monitoring settings';

/** ADMIN-only configuration of monitoring: groups, CORS allow-list, registry credentials. */
export const monitoringAdminOperations = {
  listGroups: defineOperation({
    id: 'listGroups', method: 'GET', path: '/admin/api/groups', tag: groups, access: 'admin',
    summary: 'List groups by id', response: Type.Array(Group),
  }),
  getGroup: defineOperation({
    id: 'getGroup', method: 'GET', path: '/admin/api/groups/{id}', tag: groups, access: 'admin',
    summary: 'One group', params: IdParams, response: Group, errors: [404],
  }),
  createGroup: defineOperation({
    id: 'createGroup', method: 'POST', path: '/admin/api/groups', tag: groups, access: 'admin',
    summary: 'Create a group', description: 'Names are unique (409).', body: GroupBody, response: Group, errors: [409],
  }),
  updateGroup: defineOperation({
    id: 'updateGroup', method: 'PUT', path: '/admin/api/groups/{id}', tag: groups, access: 'admin',
    summary: 'Rename a group or change its visibility', params: IdParams, body: GroupBody, response: Group, errors: [404, 409],
  }),
  deleteGroup: defineOperation({
    id: 'deleteGroup', method: 'DELETE', path: '/admin/api/groups/{id}', tag: groups, access: 'admin',
    summary: 'Delete an empty group',
    description: '409 while resources belong to it: removing a HIDDEN group would otherwise make its resources public.',
    params: IdParams, response: Deleted, errors: [404, 409],
  }),
  listCorsOrigins: defineOperation({
    id: 'listCorsOrigins', method: 'GET', path: '/admin/api/settings/cors-origins', tag: settings, access: 'admin',
    summary: 'The CORS allow-list of /api/', response: CorsOrigins,
  }),
  addCorsOrigin: defineOperation({
    id: 'addCorsOrigin', method: 'POST', path: '/admin/api/settings/cors-origins', tag: settings, access: 'admin',
    summary: 'Allow an origin',
    description: '`scheme://host[:port]`: no path, no trailing slash, no wildcard. Stored canonical (scheme and host in lower case, the '
      + 'default port dropped), as browsers send it. Effective on the next request. Returns the origin as stored and the list.',
    body: CorsOriginBody, response: CorsOriginAdded,
  }),
  removeCorsOrigin: defineOperation({
    id: 'removeCorsOrigin', method: 'DELETE', path: '/admin/api/settings/cors-origins', tag: settings, access: 'admin',
    summary: 'Remove an origin (`?origin=`)', description: 'Any spelling of a listed origin finds it (case, default port, a trailing slash).',
    query: CorsOriginQuery, response: Deleted, errors: [404],
  }),
  listRegistryCredentials: defineOperation({
    id: 'listRegistryCredentials', method: 'GET', path: '/admin/api/registry-credentials', tag: settings, access: 'admin',
    summary: 'Registry credentials (passwords never returned)', response: Type.Array(RegistryCredential),
  }),
  createRegistryCredential: defineOperation({
    id: 'createRegistryCredential', method: 'POST', path: '/admin/api/registry-credentials', tag: settings, access: 'admin',
    summary: 'Store a credential for a registry', description: 'One per registry (409).',
    body: RegistryCredentialCreate, response: RegistryCredential, errors: [409],
  }),
  deleteRegistryCredential: defineOperation({
    id: 'deleteRegistryCredential', method: 'DELETE', path: '/admin/api/registry-credentials/{id}', tag: settings, access: 'admin',
    summary: 'Delete a registry credential', params: IdParams, response: Deleted, errors: [404],
  }),
} as const;
