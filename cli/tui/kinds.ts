/** Event kinds of the streams (docs/API.md#events), listed here so that commands need not load schemas. */
export const TOPOLOGY_KINDS = [
  'SNAPSHOT',
  'AGENT_CONNECTED',
  'AGENT_DISCONNECTED',
  'REQUEST_IN_FLIGHT',
  'REQUEST_COMPLETED',
  'AGENT_CREATED',
  'AGENT_DELETED',
  'TOKEN_ROTATED',
  'ROUTE_CREATED',
  'ROUTE_UPDATED',
  'ROUTE_DELETED',
  'ROUTE_HEALTH',
  'POD_UP',
  'POD_DOWN',
] as const;
export const MONITORING_KINDS = ['SNAPSHOT', 'CHECK_COMPLETED', 'STATUS_CHANGED', 'INCIDENT_OPENED', 'INCIDENT_RESOLVED'] as const;
export const ROUTE_LOG_KINDS = ['LOG'] as const;
