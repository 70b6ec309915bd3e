import { type Static, Type } from '@sinclair/typebox';
import { MAX_CONDITION_LENGTH, MAX_CONDITIONS } from '../../probes/conditions/types.ts';
import { HTTP_METHODS } from '../../probes/types.ts';
import { Id, NullableDateTime, StringEnum } from './common.ts';

/**
 * What a route adds beyond the seed's one agent (docs/API.md#agent-pools): a pool of agents with a
 * policy, target health checks that steer traffic, and header and path rules of HTTP routes.
 */

/** How a route spreads requests (TCP: connections) over its pool. */
export const POOL_POLICIES = ['round-robin', 'least-outstanding', 'failover'] as const;
export type PoolPolicy = (typeof POOL_POLICIES)[number];
/** `client-ip`: HTTP requests of one client IP go to the same agent while it stays in the rotation. */
export const AFFINITIES = ['none', 'client-ip'] as const;
export type Affinity = (typeof AFFINITIES)[number];
/** The most agents one route's pool holds. */
export const MAX_POOL_AGENTS = 16;

const Target = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: "this agent's own target (same form as the route's `target`); null: the route's",
});

/** One agent of a pool, in the pool's order (`failover` takes the first healthy one). */
export const RouteAgent = Type.Object(
  { agentId: Id, target: Type.Optional(Type.Union([Target, Type.Null()])) },
  { title: 'RouteAgent', additionalProperties: false },
);
export type RouteAgent = Static<typeof RouteAgent>;
export const RouteAgents = Type.Array(RouteAgent, {
  minItems: 1,
  maxItems: MAX_POOL_AGENTS,
  description: `the pool, 1 to ${MAX_POOL_AGENTS} distinct agents in order; \`agentId\` is the first one's`,
});

const HeaderName = Type.String({ minLength: 1, maxLength: 256, pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$", description: 'an HTTP token' });
const HeaderValue = Type.String({ maxLength: 8192, pattern: '^[^\\r\\n\\u0000]*$', description: 'no CR, LF or NUL' });
/** Headers to set (replacing any the message has) and to remove, on requests or responses of an HTTP route. */
export const HeaderRules = Type.Object(
  {
    set: Type.Optional(
      Type.Record(HeaderName, HeaderValue, {
        additionalProperties: false,
        maxProperties: 32,
        description: 'name: value, replacing the received ones',
      }),
    ),
    remove: Type.Optional(Type.Array(HeaderName, { maxItems: 32, description: 'names removed (case-insensitive)' })),
  },
  { title: 'HeaderRules', additionalProperties: false },
);
export type HeaderRules = Static<typeof HeaderRules>;

const StatusRange = Type.String({ pattern: '^[1-5][0-9]{2}(-[1-5][0-9]{2})?$', description: '`200`, or a range `200-299`' });
/**
 * A target health check: each agent of the pool runs it against its own target (the check of an HTTP
 * resource, on `path` of the target; a TCP route's is a connect). Failing agents leave the rotation.
 */
export const RouteHealthCheck = Type.Object(
  {
    path: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        pattern: '^/[^\\s#]*$',
        description: 'HTTP: the path (and query) checked on the target (default /)',
      }),
    ),
    method: Type.Optional(StringEnum(HTTP_METHODS, { description: 'HTTP: default GET' })),
    headers: Type.Optional(
      Type.Record(HeaderName, HeaderValue, { additionalProperties: false, maxProperties: 32, description: 'HTTP: request headers' }),
    ),
    skipTLS: Type.Optional(
      Type.Boolean({
        description: "HTTP: do not verify an https target's certificate (as an agent run with --skip-tls forwards); default false",
      }),
    ),
    expectStatus: Type.Optional(
      Type.Array(StatusRange, { minItems: 1, maxItems: 32, description: 'HTTP: the statuses that are healthy (default 200-299)' }),
    ),
    conditions: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: MAX_CONDITION_LENGTH }), {
        maxItems: MAX_CONDITIONS,
        description: "conditions as a resource's (docs/API.md#conditions), all of which must hold",
      }),
    ),
    intervalSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 3600, description: 'seconds between checks (default 10)' })),
    timeoutSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 120, description: 'default 5' })),
    unhealthyAfter: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 10, description: 'failed checks in a row before an agent leaves the rotation (default 1)' }),
    ),
    healthyAfter: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 10, description: 'passed checks in a row before it returns (default 1)' }),
    ),
  },
  { title: 'RouteHealthCheck', additionalProperties: false },
);
export type RouteHealthCheck = Static<typeof RouteHealthCheck>;

export const POOL_HEALTHS = ['HEALTHY', 'UNHEALTHY', 'UNKNOWN', 'NOT_CHECKED'] as const;
export type PoolHealth = (typeof POOL_HEALTHS)[number];
/** One agent of a route's pool as the daemon sees it now: in the route's detail and the topology. */
export const PoolMember = Type.Object(
  {
    agentId: Id,
    name: Type.String(),
    connected: Type.Boolean({ description: 'a session is open on some pod' }),
    health: StringEnum(POOL_HEALTHS, {
      description: 'HEALTHY or UNHEALTHY by the health check; UNKNOWN: not checked yet; NOT_CHECKED: the route has no health check',
    }),
    healthCheckedAt: NullableDateTime,
    healthError: Type.Union([Type.String(), Type.Null()]),
    inRotation: Type.Boolean({ description: 'connected and not UNHEALTHY: new requests may go to it' }),
    inFlight: Type.Integer({ minimum: 0, description: 'requests (TCP: connections) through it in flight on this pod' }),
    requests: Type.Integer({ minimum: 0, description: 'requests (TCP: connections) this pod sent through it since it started' }),
  },
  { title: 'PoolMember' },
);
export type PoolMember = Static<typeof PoolMember>;

/** `monctl routes test HOST[/PATH]`: which route and which agent a request would take, and why. */
export const RouteMatchQuery = Type.Object({
  host: Type.String({ minLength: 1, maxLength: 253 }),
  path: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'default /' })),
  clientIp: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'for affinity and IP rules (default none)' })),
});
export const RouteMatch = Type.Object(
  {
    routeId: Type.Union([Id, Type.Null()]),
    routeName: Type.Union([Type.String(), Type.Null()]),
    agentId: Type.Union([Id, Type.Null()]),
    agentName: Type.Union([Type.String(), Type.Null()]),
    /** What the target would get as its path (after stripPrefix), for a matched HTTP route. */
    forwardPath: Type.Union([Type.String(), Type.Null()]),
    reasons: Type.Array(Type.String(), { description: 'why: the hostname rule, the prefix, the policy, agents skipped' }),
  },
  { title: 'RouteMatch' },
);
export type RouteMatch = Static<typeof RouteMatch>;
