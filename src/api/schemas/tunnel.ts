import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { Body, DateTime, Id, NullableDateTime, StringEnum } from './common.ts';
import { AFFINITIES, HeaderRules, POOL_HEALTHS, POOL_POLICIES, PoolMember, RouteAgents, RouteHealthCheck } from './route-pools.ts';

/**
 * Shapes of the tunnel administration API (docs/API.md#tunnel-administration) and the
 * payloads of its two event streams (docs/API.md#events), shared by the daemon, the
 * typed client and the CLI's live views.
 */

export const AGENT_STATUSES = ['PENDING', 'CONNECTED', 'DISCONNECTED'] as const;
export type AgentStatus = (typeof AGENT_STATUSES)[number];
export const ROUTE_TYPES = ['HTTP', 'TCP'] as const;
export type RouteType = (typeof ROUTE_TYPES)[number];

/** Agent and route names: 1 to 64 of `[A-Za-z0-9._-]`. */
export const ObjectName = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[A-Za-z0-9._-]+$',
  description: '1 to 64 letters, digits, dots, underscores or hyphens',
});

export const Agent = Type.Object(
  {
    id: Id,
    name: Type.String(),
    status: StringEnum(AGENT_STATUSES),
    hasToken: Type.Boolean(),
    tokenCreatedAt: NullableDateTime,
    connectedAt: NullableDateTime,
    lastSeenAt: NullableDateTime,
    podId: Type.Union([Id, Type.Null()]),
    remoteAddress: Type.Union([Type.String(), Type.Null()]),
    version: Type.Union([Type.String(), Type.Null()]),
    createdAt: DateTime,
  },
  { title: 'Agent' },
);
export type Agent = Static<typeof Agent>;
export const AgentCreate = Body({ name: ObjectName }, 'AgentCreate');
export const AgentToken = Type.Object(
  { token: Type.String({ description: 'the registration token, shown in this response only' }) },
  { title: 'AgentToken' },
);

const Hostname = Type.String({ minLength: 1, maxLength: 253, description: 'a DNS name or an IP address' });
const RouteHostname = Type.String({
  minLength: 1,
  maxLength: 253,
  description:
    'a DNS name, an IP address, or a wildcard *.apps.example.com (any name one label or more under it, never the bare name); an exact name wins over a wildcard, a longer wildcard over a shorter one (docs/API.md#wildcard-hostnames)',
});
const PathPrefix = Type.String({
  minLength: 1,
  maxLength: 1024,
  pattern: '^/',
  description: 'a normalised path starting with / (no dot-segments, no //); matched at a segment boundary',
});
const ListenPort = Type.Integer({ minimum: 1, maximum: 65535 });
const Target = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'HTTP: an http(s):// URL seen from the agent; TCP: host:port',
});

/** Who may use an HTTP route at the edge (docs/API.md#routes). */
export const ROUTE_AUTHS = ['none', 'basic', 'apiKey', 'oidc'] as const;
export type RouteAuth = (typeof ROUTE_AUTHS)[number];
/** Bounds of a route's sign-in rules: they are checked on every request and sealed into no cookie. */
export const SSO_RULES_MAX = 100;
const SsoRuleList = <T extends TSchema>(item: T, what: string) => Type.Array(item, { maxItems: SSO_RULES_MAX, description: what });
/** The sign-in rules of a route with `auth: oidc` (docs/API.md#route-sign-in): one match of any list admits. */
export const RouteSso = Type.Object(
  {
    emails: SsoRuleList(Type.String(), 'verified email addresses admitted, lower-case'),
    domains: SsoRuleList(Type.String(), 'email domains admitted (verified emails), lower-case ASCII; ["*"]: every account of the provider'),
    groups: SsoRuleList(Type.String(), 'groups (the --oidc-groups-claim) admitted, exact'),
    sessionTtl: Type.Union([Type.Integer(), Type.Null()], { description: 'seconds a sign-in lasts; null: --route-session' }),
  },
  { title: 'RouteSso' },
);
export type RouteSso = Static<typeof RouteSso>;
export const RouteSsoInput = Type.Object(
  {
    emails: Type.Optional(SsoRuleList(Type.String({ minLength: 1, maxLength: 254 }), 'email addresses (need email_verified)')),
    domains: Type.Optional(
      SsoRuleList(Type.String({ minLength: 1, maxLength: 253 }), 'email domains, "@" optional, IDNA allowed; "*": every account'),
    ),
    groups: Type.Optional(SsoRuleList(Type.String({ minLength: 1, maxLength: 256 }), 'group names, matched exactly')),
    sessionTtl: Type.Optional(
      Type.Union([Type.Integer({ minimum: 60, maximum: 31 * 86_400 }), Type.Null()], {
        description: 'seconds, 60 to 31 days; null: --route-session',
      }),
    ),
  },
  { title: 'RouteSsoInput', additionalProperties: false },
);
export type RouteSsoInput = Static<typeof RouteSsoInput>;
const Cidr = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'an IPv4 or IPv6 address, or a CIDR block (10.0.0.0/8, 2001:db8::/32)',
});
const CidrList = (what: string) => Type.Array(Cidr, { maxItems: 1000, description: what });
export const RateLimit = Type.Object(
  {
    perSecond: Type.Number({
      exclusiveMinimum: 0,
      maximum: 1_000_000,
      description: 'requests (TCP: new connections) per second per client IP, sustained',
    }),
    burst: Type.Integer({
      minimum: 1,
      maximum: 1_000_000,
      description: 'requests (TCP: connections) a client IP may make at once before the rate applies',
    }),
  },
  { title: 'RateLimit', additionalProperties: false },
);
export type RateLimit = Static<typeof RateLimit>;
const BasicUserName = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[^:\\u0000-\\u001f]+$',
  description: 'no colon, no control characters',
});
export const BasicUserInput = Type.Object(
  {
    username: BasicUserName,
    password: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1024,
        description: 'stored hashed; leave out to keep the stored password of an existing user',
      }),
    ),
  },
  { title: 'BasicUserInput', additionalProperties: false },
);
/** The state of the certificate the TLS edge serves for a route's hostname. */
export const CERTIFICATE_STATES = ['VALID', 'EXPIRED', 'PENDING', 'FAILED', 'NONE'] as const;
export const RouteCertificate = Type.Object(
  {
    state: StringEnum(CERTIFICATE_STATES, {
      description:
        'VALID: served; EXPIRED: served but past notAfter; PENDING: ACME has not issued one yet; FAILED: the last order failed and none is valid; NONE: no certificate and no ACME',
    }),
    certificateId: Type.Union([Id, Type.Null()]),
    source: Type.Union([StringEnum(['UPLOAD', 'ACME'] as const), Type.Null()]),
    notAfter: NullableDateTime,
    lastError: Type.Union([Type.String(), Type.Null()]),
  },
  { title: 'RouteCertificate' },
);
export type RouteCertificate = Static<typeof RouteCertificate>;

export const Route = Type.Object(
  {
    id: Id,
    name: Type.String(),
    type: StringEnum(ROUTE_TYPES),
    agentId: Id,
    agents: Type.Array(Type.Object({ agentId: Id, target: Type.Union([Type.String(), Type.Null()]) }), {
      description: "the pool in order (docs/API.md#agent-pools); agentId is the first one's",
    }),
    policy: StringEnum(POOL_POLICIES),
    affinity: StringEnum(AFFINITIES),
    healthCheck: Type.Union([RouteHealthCheck, Type.Null()]),
    requestHeaders: HeaderRules,
    responseHeaders: HeaderRules,
    hostHeader: Type.Union([Type.String(), Type.Null()], { description: "HTTP: the Host the target gets; null: the target URL's" }),
    preserveHost: Type.Boolean({ description: "HTTP: the target gets the client's Host (hostHeader must be null)" }),
    stripPrefix: Type.Boolean({ description: 'HTTP: the pathPrefix is removed before forwarding' }),
    pool: Type.Optional(Type.Array(PoolMember, { description: 'in the route detail and the topology: each agent of the pool now' })),
    target: Type.String(),
    hostname: Type.Union([Type.String(), Type.Null()]),
    pathPrefix: Type.Union([Type.String(), Type.Null()]),
    listenPort: Type.Union([Type.Integer(), Type.Null()]),
    allowEncodedSlashes: Type.Boolean({
      description: 'HTTP: forward paths holding %2F or %5C (refused with 400 otherwise); false for TCP',
    }),
    enabled: Type.Boolean(),
    auth: StringEnum(ROUTE_AUTHS, {
      description:
        'HTTP: none, basic (the basicUsers), apiKey (an API key scoped to this route, in X-API-KEY or ?token=), or oidc (sign-in through --oidc-issuer, by the sso rules)',
    }),
    basicUsers: Type.Array(Type.String(), { description: 'the usernames of basic auth (passwords are stored hashed, never returned)' }),
    ipAllow: Type.Array(Type.String(), { description: 'when not empty, only client IPs in these blocks are served (HTTP and TCP)' }),
    ipDeny: Type.Array(Type.String(), { description: 'client IPs in these blocks are refused (HTTP: 403; TCP: the connection is closed)' }),
    rateLimit: Type.Union([RateLimit, Type.Null()]),
    httpsRedirect: Type.Boolean({ description: 'HTTP: plain-HTTP requests get a 308 to HTTPS (needs --edge-tls-listen); false for TCP' }),
    sso: Type.Union([RouteSso, Type.Null()], { description: 'the sign-in rules of auth oidc; null otherwise' }),
    certificate: Type.Optional(
      Type.Union([RouteCertificate, Type.Null()], {
        description: 'HTTP, in the route detail: the certificate the TLS edge serves for the hostname',
      }),
    ),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { title: 'Route' },
);
export type Route = Static<typeof Route>;

const poolFields = {
  agents: Type.Optional(RouteAgents),
  policy: Type.Optional(StringEnum(POOL_POLICIES, { description: 'default round-robin' })),
  affinity: Type.Optional(StringEnum(AFFINITIES, { description: 'HTTP only; default none' })),
  healthCheck: Type.Optional(
    Type.Union([RouteHealthCheck, Type.Null()], { description: 'null: none (every connected agent is in the rotation)' }),
  ),
  requestHeaders: Type.Optional(HeaderRules),
  responseHeaders: Type.Optional(HeaderRules),
  hostHeader: Type.Optional(Type.Union([Hostname, Type.Null()], { description: "HTTP only; null: the target URL's host" })),
  preserveHost: Type.Optional(Type.Boolean({ description: 'HTTP only' })),
  stripPrefix: Type.Optional(Type.Boolean({ description: 'HTTP only' })),
};
const routeFields = {
  name: ObjectName,
  type: StringEnum(ROUTE_TYPES),
  agentId: Type.Optional(Id),
  ...poolFields,
  target: Target,
  hostname: Type.Optional(RouteHostname),
  pathPrefix: Type.Optional(PathPrefix),
  listenPort: Type.Optional(ListenPort),
  allowEncodedSlashes: Type.Optional(
    Type.Boolean({ description: 'HTTP only: forward paths holding encoded slashes (%2F, %5C); default false' }),
  ),
  enabled: Type.Optional(Type.Boolean()),
  auth: Type.Optional(StringEnum(ROUTE_AUTHS, { description: 'HTTP only: a TCP route takes none' })),
  basicUsers: Type.Optional(
    Type.Array(BasicUserInput, {
      maxItems: 100,
      description: 'HTTP only: replaces the list; a user without password keeps the stored one (new users need one)',
    }),
  ),
  ipAllow: Type.Optional(
    CidrList('client IPs served; empty: all (HTTP: X-Forwarded-For counts only from --trusted-proxies; TCP: the peer address)'),
  ),
  ipDeny: Type.Optional(CidrList('client IPs refused (HTTP: 403; TCP: connection closed), even when allowed')),
  rateLimit: Type.Optional(Type.Union([RateLimit, Type.Null()], { description: 'null: no limit' })),
  httpsRedirect: Type.Optional(Type.Boolean({ description: 'HTTP only' })),
  sso: Type.Optional(
    Type.Union([RouteSsoInput, Type.Null()], {
      description: 'HTTP only, with auth oidc: replaces the rules (lists left out are kept); null: none',
    }),
  ),
};
/**
 * HTTP routes take `hostname` (and `pathPrefix`, default `/`); TCP routes take `listenPort`. The pool is
 * `agentId` (one agent) or `agents`; both: `agents` must start with `agentId`.
 */
export const RouteCreate = Body(routeFields, 'RouteCreate');
/**
 * PUT: the fields given replace the stored ones, the others are kept. When
 * `type` changes, the fields of the old type are dropped. `agents` replaces the pool; `agentId`
 * alone replaces it with that one agent.
 */
export const RouteUpdate = Body(
  {
    name: Type.Optional(ObjectName),
    type: Type.Optional(StringEnum(ROUTE_TYPES)),
    agentId: Type.Optional(Id),
    ...poolFields,
    target: Type.Optional(Target),
    hostname: routeFields.hostname,
    pathPrefix: routeFields.pathPrefix,
    listenPort: routeFields.listenPort,
    allowEncodedSlashes: routeFields.allowEncodedSlashes,
    enabled: routeFields.enabled,
    auth: routeFields.auth,
    basicUsers: routeFields.basicUsers,
    ipAllow: routeFields.ipAllow,
    ipDeny: routeFields.ipDeny,
    rateLimit: routeFields.rateLimit,
    httpsRedirect: routeFields.httpsRedirect,
    sso: routeFields.sso,
  },
  'RouteUpdate',
);
export type RouteCreate = Static<typeof RouteCreate>;
export type RouteUpdate = Static<typeof RouteUpdate>;

const NullableInt = Type.Union([Type.Integer(), Type.Null()]);
const NullableString = Type.Union([Type.String(), Type.Null()]);
export const RouteLogEntry = Type.Object(
  {
    id: Id,
    routeId: Id,
    at: DateTime,
    method: NullableString,
    path: NullableString,
    status: NullableInt,
    durationMs: Type.Integer(),
    bytesIn: Type.Integer(),
    bytesOut: Type.Integer(),
    clientIp: NullableString,
    agentId: Type.Union([Id, Type.Null()]),
    podId: Type.Union([Id, Type.Null()]),
    error: NullableString,
  },
  { title: 'RouteLogEntry' },
);
export type RouteLogEntry = Static<typeof RouteLogEntry>;

/** What a pod carries; in the topology only. */
export const PodLoad = Type.Object(
  {
    shards: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
      description: 'check shards (of 64) the pod holds; null for a single daemon on SQLite',
    }),
    resources: Type.Integer({ minimum: 0, description: 'resources the pod checks' }),
    checksTotal: Type.Integer({ minimum: 0, description: 'checks the pod has run since it started' }),
    agents: Type.Integer({ minimum: 0, description: 'agent sessions the pod holds' }),
  },
  { title: 'PodLoad' },
);
export type PodLoad = Static<typeof PodLoad>;
export const Pod = Type.Object(
  { id: Id, name: Type.String(), startedAt: DateTime, version: Type.String(), load: Type.Optional(PodLoad) },
  { title: 'Pod' },
);
export type Pod = Static<typeof Pod>;
export const TopologyRoute = Type.Composite([Route, Type.Object({ inFlight: Type.Integer({ minimum: 0 }) })], {
  title: 'TopologyRoute',
});
export const EDGE_KINDS = ['CONNECTION', 'SERVES'] as const;
export const TopologyEdge = Type.Object(
  {
    from: Type.String({ examples: ['pod:1', 'agent:3'] }),
    to: Type.String({ examples: ['agent:3', 'route:7'] }),
    kind: StringEnum(EDGE_KINDS),
  },
  { title: 'TopologyEdge' },
);
/** The checks an agent runs for resources located there, as the daemon it is connected to sees them. */
export const ProbeLoad = Type.Object(
  {
    agentId: Id,
    checksPerMinute: Type.Integer({ minimum: 0, description: 'checks the agent answered in the last 60 s' }),
    inFlight: Type.Integer({ minimum: 0, description: 'checks sent and not answered yet (running or queued at the agent)' }),
    skipped: Type.Integer({ minimum: 0, description: "checks not sent since the daemon started, because the agent's queue was full" }),
  },
  { title: 'ProbeLoad' },
);
export type ProbeLoad = Static<typeof ProbeLoad>;
export const Topology = Type.Object(
  {
    pods: Type.Array(Pod),
    agents: Type.Array(Agent),
    routes: Type.Array(TopologyRoute),
    edges: Type.Array(TopologyEdge),
    probes: Type.Array(ProbeLoad, { description: 'probe load per agent, in agent order' }),
  },
  { title: 'Topology' },
);
export type Topology = Static<typeof Topology>;

const Named = Type.Object({ id: Id, name: Type.String() });

/** Payload of each event kind of `/admin/sse/topology`, by kind. */
/** The hub channel behind `/admin/sse/topology`; pods relay it to each other (daemon/cluster/event-relay.ts). */
export const TOPOLOGY_CHANNEL = 'topology';

export const TopologyEvents = {
  SNAPSHOT: Topology,
  AGENT_CREATED: Type.Object({ agent: Agent }),
  AGENT_DELETED: Named,
  TOKEN_ROTATED: Type.Object({ agentId: Id }),
  ROUTE_CREATED: Type.Object({ route: Route }),
  ROUTE_UPDATED: Type.Object({ route: Route }),
  ROUTE_DELETED: Named,
  AGENT_CONNECTED: Type.Object({ agent: Agent, podId: Id, replaced: Type.Boolean() }),
  AGENT_DISCONNECTED: Type.Object({ agent: Agent, reason: Type.String() }),
  REQUEST_IN_FLIGHT: Type.Object({
    routeId: Id,
    agentId: Id,
    requestId: Type.String(),
    method: Type.String(),
    path: Type.String(),
    inFlight: Type.Integer({ minimum: 0 }),
  }),
  REQUEST_COMPLETED: Type.Object({
    routeId: Id,
    agentId: Id,
    requestId: Type.String(),
    status: NullableInt,
    durationMs: Type.Integer(),
    inFlight: Type.Integer({ minimum: 0 }),
  }),
  POD_UP: Type.Object({ pod: Pod }),
  /** An agent of a route's pool changed health, or entered or left the rotation. */
  ROUTE_HEALTH: Type.Object({
    routeId: Id,
    agentId: Id,
    health: StringEnum(POOL_HEALTHS),
    inRotation: Type.Boolean(),
    error: Type.Union([Type.String(), Type.Null()]),
  }),
  POD_DOWN: Type.Object({ pod: Pod }),
  /** An agent's probe load moved (sent at most every 5 s). */
  PROBE_LOAD: ProbeLoad,
} satisfies Record<string, TSchema>;
export type TopologyEventKind = keyof typeof TopologyEvents;
export type TopologyEventData<K extends TopologyEventKind> = Static<(typeof TopologyEvents)[K]>;

/** Payload of each event kind of `/admin/sse/routes/{id}/log`. */
export const RouteLogEvents = { LOG: RouteLogEntry } satisfies Record<string, TSchema>;
