import { Type } from '@sinclair/typebox';
import { defineOperation } from '../operation.ts';
import { Deleted, IdParams, PageQuery } from '../schemas/common.ts';
import { Agent, AgentCreate, AgentToken, Route, RouteCreate, RouteLogEntry, RouteUpdate, Topology } from '../schemas/tunnel.ts';

const agents = 'Agents';
const routes = 'Routes';
const topology = 'Topology';

/** The tunnel administration API (docs/API.md#tunnel-administration: agents, routes, route log, topology, streams). */
export const tunnelOperations = {
  listAgents: defineOperation({
    id: 'listAgents', method: 'GET', path: '/admin/api/agents', tag: agents, access: 'admin',
    summary: 'List agents', response: Type.Array(Agent),
  }),
  createAgent: defineOperation({
    id: 'createAgent', method: 'POST', path: '/admin/api/agents', tag: agents, access: 'admin',
    summary: 'Create an agent slot', description: 'The agent has no token yet: generate one with `POST /admin/api/agents/{id}/token`.',
    body: AgentCreate, response: Agent, errors: [409],
  }),
  getAgent: defineOperation({
    id: 'getAgent', method: 'GET', path: '/admin/api/agents/{id}', tag: agents, access: 'admin',
    summary: 'Agent details', params: IdParams, response: Agent, errors: [404],
  }),
  deleteAgent: defineOperation({
    id: 'deleteAgent', method: 'DELETE', path: '/admin/api/agents/{id}', tag: agents, access: 'admin',
    summary: 'Delete an agent', description: 'A connected agent is disconnected; its routes are deleted with it. 409 while resources are checked there (their `locations`).',
    params: IdParams, response: Deleted, errors: [404, 409],
  }),
  rotateAgentToken: defineOperation({
    id: 'rotateAgentToken', method: 'POST', path: '/admin/api/agents/{id}/token', tag: agents, access: 'admin',
    summary: 'Generate a new registration token',
    description: 'The token is shown in this response only. The previous token stops working at once and an agent connected with it is disconnected.',
    params: IdParams, response: AgentToken, errors: [404],
  }),
  listRoutes: defineOperation({
    id: 'listRoutes', method: 'GET', path: '/admin/api/routes', tag: routes, access: 'admin',
    summary: 'List routes', response: Type.Array(Route),
  }),
  createRoute: defineOperation({
    id: 'createRoute', method: 'POST', path: '/admin/api/routes', tag: routes, access: 'admin',
    summary: 'Create a route',
    description: 'HTTP routes need `hostname` (and `pathPrefix`, default `/`) and an http(s) `target`; TCP routes need a free `listenPort` and a `host:port` target.',
    body: RouteCreate, response: Route, errors: [409],
  }),
  getRoute: defineOperation({
    id: 'getRoute', method: 'GET', path: '/admin/api/routes/{id}', tag: routes, access: 'admin',
    summary: 'Route details', params: IdParams, response: Route, errors: [404],
  }),
  updateRoute: defineOperation({
    id: 'updateRoute', method: 'PUT', path: '/admin/api/routes/{id}', tag: routes, access: 'admin',
    summary: 'Update a route', description: 'Fields left out keep their value; changing `type` drops the fields of the old type.',
    params: IdParams, body: RouteUpdate, response: Route, errors: [404, 409],
  }),
  deleteRoute: defineOperation({
    id: 'deleteRoute', method: 'DELETE', path: '/admin/api/routes/{id}', tag: routes, access: 'admin',
    summary: 'Delete a route', params: IdParams, response: Deleted, errors: [404],
  }),
  getRouteLog: defineOperation({
    id: 'getRouteLog', method: 'GET', path: '/admin/api/routes/{id}/log', tag: routes, access: 'admin',
    summary: 'Recent access log entries of a route, most recent first',
    description: '`before` pages back; a `Link: <…>; rel="next"` header is sent when older entries exist. The newest 10,000 entries per route are kept.',
    params: IdParams, query: PageQuery, response: Type.Array(RouteLogEntry), errors: [404],
  }),
  getTopology: defineOperation({
    id: 'getTopology', method: 'GET', path: '/admin/api/topology', tag: topology, access: 'admin',
    summary: 'Pods, agents, routes (with requests in flight) and the edges between them', response: Topology,
  }),
  topologyEvents: defineOperation({
    id: 'topologyEvents', method: 'GET', path: '/admin/sse/topology', tag: topology, access: 'admin',
    summary: 'Live topology events (SSE)',
    description: 'Starts with `SNAPSHOT` (the topology), then AGENT_*, ROUTE_*, TOKEN_ROTATED, REQUEST_*, POD_* events. Reconnect with `Last-Event-ID` to replay what was missed.',
    stream: true,
  }),
  routeLogEvents: defineOperation({
    id: 'routeLogEvents', method: 'GET', path: '/admin/sse/routes/{id}/log', tag: routes, access: 'admin',
    summary: 'Live access log entries of a route (SSE)', description: 'Each `LOG` event is a route log entry.',
    params: IdParams, stream: true, errors: [404],
  }),
} as const;
