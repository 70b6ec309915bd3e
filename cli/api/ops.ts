import type { Operations } from '../../src/api/operations.ts';

/**
 * The operations the CLI calls, as light `{id, method, path}` records typed as
 * the real declarations of src/api. Importing src/api/operations.ts at run time
 * would load TypeBox and every schema (over 100 ms of a cold start); the types
 * come from `import type` (erased), so a wrong method or path, or an id that
 * does not exist, is still a compile error, and test/cli/ops-table.test.ts
 * compares the values with the real table.
 */
type All = Operations;
export type OpId = keyof All;

function op<K extends OpId>(id: K, method: All[K]['method'], path: All[K]['path']): All[K] {
  return { id, method, path } as unknown as All[K];
}

export const ops = {
  health: op('health', 'GET', '/actuator/health'),
  me: op('me', 'GET', '/api/me'),
  listUsers: op('listUsers', 'GET', '/admin/api/users'),
  createUser: op('createUser', 'POST', '/admin/api/users'),
  updateUser: op('updateUser', 'PUT', '/admin/api/users/{id}'),
  deleteUser: op('deleteUser', 'DELETE', '/admin/api/users/{id}'),
  listApiKeys: op('listApiKeys', 'GET', '/admin/api/api-keys'),
  createApiKey: op('createApiKey', 'POST', '/admin/api/api-keys'),
  revokeApiKey: op('revokeApiKey', 'DELETE', '/admin/api/api-keys/{id}'),
  listResources: op('listResources', 'GET', '/api/resources'),
  getResource: op('getResource', 'GET', '/api/resources/{id}'),
  createResource: op('createResource', 'POST', '/api/resources'),
  updateResource: op('updateResource', 'PATCH', '/api/resources/{id}'),
  deleteResource: op('deleteResource', 'DELETE', '/api/resources/{id}'),
  checkResource: op('checkResource', 'POST', '/api/resources/{id}/check'),
  getResourceHistory: op('getResourceHistory', 'GET', '/api/resources/{id}/history'),
  listAdminResources: op('listAdminResources', 'GET', '/admin/api/resources'),
  getAdminResource: op('getAdminResource', 'GET', '/admin/api/resources/{id}'),
  monitoringEvents: op('monitoringEvents', 'GET', '/api/events'),
  listGroups: op('listGroups', 'GET', '/admin/api/groups'),
  createGroup: op('createGroup', 'POST', '/admin/api/groups'),
  updateGroup: op('updateGroup', 'PUT', '/admin/api/groups/{id}'),
  deleteGroup: op('deleteGroup', 'DELETE', '/admin/api/groups/{id}'),
  listAnnouncements: op('listAnnouncements', 'GET', '/api/announcements'),
  getAnnouncement: op('getAnnouncement', 'GET', '/api/announcements/{id}'),
  createAnnouncement: op('createAnnouncement', 'POST', '/api/announcements'),
  replaceAnnouncement: op('replaceAnnouncement', 'PUT', '/api/announcements/{id}'),
  deleteAnnouncement: op('deleteAnnouncement', 'DELETE', '/api/announcements/{id}'),
  listCorsOrigins: op('listCorsOrigins', 'GET', '/admin/api/settings/cors-origins'),
  addCorsOrigin: op('addCorsOrigin', 'POST', '/admin/api/settings/cors-origins'),
  removeCorsOrigin: op('removeCorsOrigin', 'DELETE', '/admin/api/settings/cors-origins'),
  listRegistryCredentials: op('listRegistryCredentials', 'GET', '/admin/api/registry-credentials'),
  createRegistryCredential: op('createRegistryCredential', 'POST', '/admin/api/registry-credentials'),
  deleteRegistryCredential: op('deleteRegistryCredential', 'DELETE', '/admin/api/registry-credentials/{id}'),
  listAgents: op('listAgents', 'GET', '/admin/api/agents'),
  createAgent: op('createAgent', 'POST', '/admin/api/agents'),
  getAgent: op('getAgent', 'GET', '/admin/api/agents/{id}'),
  deleteAgent: op('deleteAgent', 'DELETE', '/admin/api/agents/{id}'),
  rotateAgentToken: op('rotateAgentToken', 'POST', '/admin/api/agents/{id}/token'),
  listRoutes: op('listRoutes', 'GET', '/admin/api/routes'),
  createRoute: op('createRoute', 'POST', '/admin/api/routes'),
  getRoute: op('getRoute', 'GET', '/admin/api/routes/{id}'),
  updateRoute: op('updateRoute', 'PUT', '/admin/api/routes/{id}'),
  deleteRoute: op('deleteRoute', 'DELETE', '/admin/api/routes/{id}'),
  getRouteLog: op('getRouteLog', 'GET', '/admin/api/routes/{id}/log'),
  listCertificates: op('listCertificates', 'GET', '/admin/api/certificates'),
  getCertificate: op('getCertificate', 'GET', '/admin/api/certificates/{id}'),
  uploadCertificate: op('uploadCertificate', 'POST', '/admin/api/certificates'),
  deleteCertificate: op('deleteCertificate', 'DELETE', '/admin/api/certificates/{id}'),
  getTopology: op('getTopology', 'GET', '/admin/api/topology'),
  topologyEvents: op('topologyEvents', 'GET', '/admin/sse/topology'),
  routeLogEvents: op('routeLogEvents', 'GET', '/admin/sse/routes/{id}/log'),
  listNotifiers: op('listNotifiers', 'GET', '/admin/api/notifiers'),
  getNotifier: op('getNotifier', 'GET', '/admin/api/notifiers/{id}'),
  createNotifier: op('createNotifier', 'POST', '/admin/api/notifiers'),
  updateNotifier: op('updateNotifier', 'PATCH', '/admin/api/notifiers/{id}'),
  deleteNotifier: op('deleteNotifier', 'DELETE', '/admin/api/notifiers/{id}'),
  testNotifier: op('testNotifier', 'POST', '/admin/api/notifiers/{id}/test'),
  rotateNotifierSigningSecret: op('rotateNotifierSigningSecret', 'POST', '/admin/api/notifiers/{id}/signing-secret'),
  listNotifierDeliveries: op('listNotifierDeliveries', 'GET', '/admin/api/notifiers/{id}/deliveries'),
  listIncidents: op('listIncidents', 'GET', '/admin/api/incidents'),
  getIncident: op('getIncident', 'GET', '/admin/api/incidents/{id}'),
  listMaintenanceWindows: op('listMaintenanceWindows', 'GET', '/admin/api/maintenance'),
  getMaintenanceWindow: op('getMaintenanceWindow', 'GET', '/admin/api/maintenance/{id}'),
  createMaintenanceWindow: op('createMaintenanceWindow', 'POST', '/admin/api/maintenance'),
  updateMaintenanceWindow: op('updateMaintenanceWindow', 'PUT', '/admin/api/maintenance/{id}'),
  deleteMaintenanceWindow: op('deleteMaintenanceWindow', 'DELETE', '/admin/api/maintenance/{id}'),
  listAlertRules: op('listAlertRules', 'GET', '/admin/api/alert-rules'),
  getAlertRule: op('getAlertRule', 'GET', '/admin/api/alert-rules/{id}'),
  createAlertRule: op('createAlertRule', 'POST', '/admin/api/alert-rules'),
  updateAlertRule: op('updateAlertRule', 'PUT', '/admin/api/alert-rules/{id}'),
  deleteAlertRule: op('deleteAlertRule', 'DELETE', '/admin/api/alert-rules/{id}'),
  listStatusPages: op('listStatusPages', 'GET', '/admin/api/status-pages'),
  getStatusPage: op('getStatusPage', 'GET', '/admin/api/status-pages/{id}'),
  createStatusPage: op('createStatusPage', 'POST', '/admin/api/status-pages'),
  updateStatusPage: op('updateStatusPage', 'PATCH', '/admin/api/status-pages/{id}'),
  deleteStatusPage: op('deleteStatusPage', 'DELETE', '/admin/api/status-pages/{id}'),
} as const;
