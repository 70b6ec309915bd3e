import { type Static, Type } from '@sinclair/typebox';
import { Body, DateTime, Id, NullableDateTime, PageQuery, StringEnum } from './common.ts';
import { Incident } from './incidents.ts';
import { QUORUMS } from '../../probes/quorum.ts';
import { MAX_CONDITION_LENGTH, MAX_CONDITIONS } from '../../probes/conditions/types.ts';
import { RESOURCE_TYPES } from '../kinds.ts';
import { SEVERITIES } from '../../notifier-fields.ts';
import { HttpCheckView, httpCheckFields } from './http-check.ts';
import { CheckTiming } from './check-timing.ts';
import { PingDetail, PushView, pushCheckFields } from './push.ts';
import { CheckOptionsView, checkOptionFields } from './check-options.ts';

/**
 * Schemas of the monitoring seed (resources, groups, check history, live
 * events) with monctl's additions (docs/API.md#resources). Field names and types follow
 * the seed exactly; nullable fields are null until the first check.
 */
export { RESOURCE_TYPES };
export const ResourceType = StringEnum(RESOURCE_TYPES);
export type ResourceType = (typeof RESOURCE_TYPES)[number];

export const VISIBILITIES = ['PUBLIC', 'AUTHENTICATED', 'HIDDEN'] as const;
export const Visibility = StringEnum(VISIBILITIES);
export type Visibility = (typeof VISIBILITIES)[number];

export const CHECK_STATUSES = ['AVAILABLE', 'NOT_AVAILABLE'] as const;
export const CheckStatus = StringEnum(CHECK_STATUSES);
export type CheckStatus = (typeof CHECK_STATUSES)[number];

export const CURRENT_STATUSES = ['available', 'not_available', 'unknown', 'inactive'] as const;
export const CurrentStatus = StringEnum(CURRENT_STATUSES);
export type CurrentStatus = (typeof CURRENT_STATUSES)[number];

/** Display names: 1 to 200 characters, no control characters, not blank. */
export const Name = Type.String({
  minLength: 1,
  maxLength: 200,
  pattern: '^(?=[\\s\\S]*\\S)[^\\u0000-\\u001f\\u007f]+$',
  description: '1 to 200 characters, not blank, no control characters',
});
/** What `target` is, per type (docs/API.md#resource-fields, #check-types), for the OpenAPI document. */
export const TARGET_FORMATS =
  'HTTP: an absolute http(s) URL; TCP, TLS, UDP, GRPC: host:port (IPv6 in brackets); DNS: a name (labels may start with _, a trailing dot is fine; an IP address for dns.recordType PTR); PING: a host name or an IP address (IPv6 without brackets); WEBSOCKET: a ws:// or wss:// URL; SSH: host or host:port (port 22); DOCKER: [registry[:port]/]path[:tag|@digest]';
export const Target = Type.String({ minLength: 1, maxLength: 2048, description: TARGET_FORMATS });
export const IntervalSeconds = Type.Integer({ minimum: 10, maximum: 86400, description: 'seconds between checks' });
export const GroupIds = Type.Array(Id, { maxItems: 100, description: 'ids of existing groups' });
export const FailureThreshold = Type.Integer({
  minimum: 1,
  maximum: 100,
  description: 'consecutive NOT_AVAILABLE checks that open an incident (default 3)',
});
export const SuccessThreshold = Type.Integer({
  minimum: 1,
  maximum: 100,
  description: 'consecutive AVAILABLE checks that resolve it (default 1)',
});

export const Quorum = StringEnum(QUORUMS, {
  description:
    'how the locations decide the status: any (down when any location fails), majority (more than half, the default), all (every location)',
});
export type Quorum = (typeof QUORUMS)[number];
export { QUORUMS };
/** Where a resource is checked (docs/API.md#check-locations). */
export const LocationRef = Type.Union([
  Type.String({ minLength: 1, maxLength: 64, description: '`daemon`, an agent name, or an agent id' }),
  Id,
]);
export const Locations = Type.Array(LocationRef, {
  minItems: 1,
  maxItems: 16,
  description: 'where the resource is checked: `daemon` (the default) and agents by name or id, each once',
});
export const Severity = StringEnum(SEVERITIES, {
  description: 'how much its failure matters (docs/API.md#severity): alert rules match on it, PAGERDUTY and OPSGENIE receive it',
});
export const DependsOn = Type.Array(Type.Union([Id, Type.String({ minLength: 1, maxLength: 200, description: 'a resource name' })]), {
  maxItems: 50,
  description:
    'resources it depends on, by id or name (docs/API.md#dependencies): while one has an open incident, its alerts are held back. A cycle is a 400; an empty list removes them',
});
/** What "up" means beyond the status (docs/API.md#conditions): Gatus's conditions, all of which must hold. */
export const Conditions = Type.Array(Type.String({ minLength: 1, maxLength: MAX_CONDITION_LENGTH }), {
  maxItems: MAX_CONDITIONS,
  description:
    'conditions that must all hold, in Gatus syntax (`[BODY].status == UP`, `[RESPONSE_TIME] < 300`); HTTP: [STATUS] [RESPONSE_TIME] [BODY] [HEADER].Name [CERTIFICATE_EXPIRATION] [IP] [CONNECTED]; TCP: [CONNECTED] [RESPONSE_TIME] [IP] [BODY]; DOCKER: [CONNECTED] [RESPONSE_TIME]; DNS: [DNS_RCODE] [BODY] [RESPONSE_TIME] [IP] [CONNECTED]; PING: [CONNECTED] [RESPONSE_TIME] [PACKET_LOSS] [IP]; TLS: [CONNECTED] [RESPONSE_TIME] [CERTIFICATE_EXPIRATION] [TLS_VERSION] [TLS_CIPHER] [IP]; UDP, WEBSOCKET, SSH: [CONNECTED] [RESPONSE_TIME] [BODY] [IP] (WEBSOCKET also [CERTIFICATE_EXPIRATION]); GRPC: [CONNECTED] [RESPONSE_TIME] [BODY] [CERTIFICATE_EXPIRATION] (docs/API.md#check-types). An empty list removes them',
});
export const LOCATION_STATUSES = ['available', 'not_available', 'unknown'] as const;
/** The latest result of one location; `unknown` with the reason in `message` when it could not check. */
export const LocationResult = Type.Object(
  {
    location: Type.String({ description: "`daemon`, or the agent's name" }),
    agentId: Type.Union([Id, Type.Null()], { description: 'null for the daemon' }),
    status: StringEnum(LOCATION_STATUSES),
    message: Type.Union([Type.String(), Type.Null()], { description: "the check's message, or why the location could not check" }),
    errorCode: Type.Union([Type.String(), Type.Null()]),
    checkedAt: NullableDateTime,
    durationMs: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
    timing: Type.Union([CheckTiming, Type.Null()], { description: 'the phases of its latest check; null when none were timed' }),
  },
  { title: 'LocationResult' },
);
export type LocationResult = Static<typeof LocationResult>;

/** What errorCode may be (docs/API.md#check-types), for the OpenAPI document. */
export const ERROR_CODES_TEXT =
  'an HTTP status code (`503`), or CONNECTION_ERROR (not reached: refused, unreachable, timeout, name not found), CONDITION_FAILED, UPSIDE_DOWN, DOCKER_ERROR, DNS_ERROR (an rcode other than NOERROR, or no record of the type), PING_FAILED (no echo came back), TLS_ERROR (handshake or certificate, STARTTLS refused), NO_RESPONSE (UDP: no datagram back), EXPECT_FAILED (TCP: the first bytes did not match), GRPC_ERROR (not SERVING, or a gRPC status), WEBSOCKET_ERROR (upgrade refused), SSH_ERROR (no SSH identification), MISSED_PING, FAILED_RUN, LOCATION_UNAVAILABLE, AGENT_DISCONNECTED';

export const Resource = Type.Object(
  {
    id: Id,
    name: Type.String(),
    resourceType: ResourceType,
    target: Type.String(),
    skipTLS: Type.Boolean(),
    recursive: Type.Boolean(),
    active: Type.Boolean(),
    createdAt: DateTime,
  },
  { title: 'Resource' },
);

export const GroupRef = Type.Object({ id: Id, name: Type.String() }, { title: 'GroupRef' });

/** What a status column needs: in the list as well as the detail (the list is all anonymous and USER callers get). */
const statusFields = {
  currentStatus: CurrentStatus,
  latestCheckStatus: Type.Union([CheckStatus, Type.Null()], { description: 'null before the first check' }),
  latestCheckedAt: NullableDateTime,
};

/** A list item: the seed's resource plus the status fields of the detail (extra fields, same meaning). */
export const ResourceListItem = Type.Object({ ...Resource.properties, ...statusFields }, { title: 'ResourceListItem' });

const detailFields = {
  groupId: Type.Union([Id, Type.Null()], { description: 'legacy: the first group by id' }),
  groupName: Type.Union([Type.String(), Type.Null()], { description: 'legacy: name of that group' }),
  groups: Type.Array(GroupRef, { description: 'sorted by id' }),
  ...statusFields,
  latestMessage: Type.Union([Type.String(), Type.Null()]),
  latestErrorCode: Type.Union([Type.String(), Type.Null()], { description: `null when AVAILABLE or unchecked; ${ERROR_CODES_TEXT}` }),
};

export const ResourceDetail = Type.Object({ ...Resource.properties, ...detailFields }, { title: 'ResourceDetail' });
/** What only administrators see: the schedule and the alerting settings and state. */
const adminFields = {
  intervalSeconds: IntervalSeconds,
  failureThreshold: FailureThreshold,
  successThreshold: SuccessThreshold,
  inMaintenance: Type.Boolean({ description: 'a maintenance window covering it (directly or through a group) is open now' }),
  certExpiresAt: Type.Union([DateTime, Type.Null()], { description: 'HTTPS: notAfter of the certificate the latest checks saw' }),
  locations: Type.Array(Type.String(), { description: 'where it is checked: `daemon` and agent names, in order' }),
  quorum: Quorum,
  conditions: Type.Array(Type.String(), { description: 'its conditions, in order; empty when none' }),
  severity: Severity,
  dependsOn: Type.Array(GroupRef, { description: 'the resources it depends on, sorted by id; empty when none' }),
  latestTiming: Type.Union([CheckTiming, Type.Null()], {
    description:
      'the phases of the latest check (docs/API.md#check-timing); null before one, for DOCKER, and for a resource checked at several locations (see locationResults)',
  }),
  ...HttpCheckView,
  push: Type.Union([PushView, Type.Null()], {
    description: 'PUSH: its ping URLs, schedule and latest ping (docs/API.md#push-checks); null for the other types',
  }),
  ...CheckOptionsView,
};

export const AdminResource = Type.Object({ ...Resource.properties, ...detailFields, ...adminFields }, { title: 'AdminResource' });
export const AdminResourceDetail = Type.Object(
  {
    ...Resource.properties,
    ...detailFields,
    ...adminFields,
    incidents: Type.Array(Incident, { description: 'its most recent incidents, the open one first' }),
    locationResults: Type.Array(LocationResult, { description: 'the latest result of each location, in location order' }),
  },
  { title: 'AdminResourceDetail' },
);

/** What create and PATCH both take, each optional (`nullable`: PATCH, where null removes an optional setting). */
function settableFields(nullable: boolean) {
  return {
    skipTLS: Type.Optional(Type.Boolean()),
    recursive: Type.Optional(Type.Boolean()),
    intervalSeconds: Type.Optional(IntervalSeconds),
    groupIds: Type.Optional(GroupIds),
    active: Type.Optional(Type.Boolean()),
    failureThreshold: Type.Optional(FailureThreshold),
    successThreshold: Type.Optional(SuccessThreshold),
    locations: Type.Optional(Locations),
    quorum: Type.Optional(Quorum),
    conditions: Type.Optional(Conditions),
    severity: Type.Optional(Severity),
    dependsOn: Type.Optional(DependsOn),
    ...httpCheckFields(nullable),
    ...pushCheckFields(nullable),
    ...checkOptionFields(nullable),
  };
}

export const ResourceCreate = Body(
  {
    name: Name,
    resourceType: ResourceType,
    target: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        description: `required, but for PUSH: there it is the slug (lower-case letters, digits, - and _), made from the name when absent. ${TARGET_FORMATS}`,
      }),
    ),
    ...settableFields(false),
  },
  'ResourceCreate',
);

export const ResourcePatch = Body(
  {
    name: Type.Optional(Name),
    resourceType: Type.Optional(ResourceType),
    target: Type.Optional(Target),
    ...settableFields(true),
  },
  'ResourcePatch',
);

const CheckLocation = Type.String({ description: 'where the check ran: `daemon`, or the name of the agent that ran it' });
export const HistoryEntry = Type.Object(
  {
    id: Id,
    status: CheckStatus,
    message: Type.String(),
    errorCode: Type.Union([Type.String(), Type.Null()], { description: `null for AVAILABLE entries; ${ERROR_CODES_TEXT}` }),
    checkedAt: DateTime,
    durationMs: Type.Integer({ minimum: 0 }),
    location: CheckLocation,
    ping: Type.Optional(PingDetail),
  },
  { title: 'HistoryEntry' },
);
export type HistoryEntry = {
  id: number;
  status: CheckStatus;
  message: string;
  errorCode: string | null;
  checkedAt: string;
  durationMs: number;
  location: string;
  /** PUSH: the ping this entry records (ADMIN reads only). */
  ping?: PingDetail;
};

export const HistoryQuery = PageQuery;

export const Group = Type.Object(
  { id: Id, name: Type.String(), visibility: Visibility, createdAt: DateTime, updatedAt: DateTime },
  { title: 'Group' },
);
export const GroupBody = Body({ name: Name, visibility: Visibility }, 'GroupBody');

/** `CHECK_COMPLETED` on `/api/events`: one per recorded check. */
export const CheckCompleted = Type.Object(
  {
    resourceId: Id,
    historyId: Id,
    status: CheckStatus,
    message: Type.String(),
    errorCode: Type.Union([Type.String(), Type.Null()]),
    durationMs: Type.Integer({ minimum: 0 }),
    checkedAt: DateTime,
    location: CheckLocation,
  },
  { title: 'CheckCompleted' },
);
export type CheckCompleted = {
  resourceId: number;
  historyId: number;
  status: CheckStatus;
  message: string;
  errorCode: string | null;
  durationMs: number;
  checkedAt: string;
  location: string;
};

/** `STATUS_CHANGED` on `/api/events`: `currentStatus` moved from one value to another. */
export const StatusChanged = Type.Object(
  { resourceId: Id, name: Type.String(), from: CurrentStatus, to: CurrentStatus, at: DateTime },
  { title: 'StatusChanged' },
);
export type StatusChanged = { resourceId: number; name: string; from: CurrentStatus; to: CurrentStatus; at: string };

/** One resource in the `SNAPSHOT` that opens `/api/events`. */
export const ResourceStatus = Type.Object(
  {
    resourceId: Id,
    name: Type.String(),
    resourceType: ResourceType,
    currentStatus: CurrentStatus,
    latestCheckStatus: Type.Union([CheckStatus, Type.Null()]),
    latestCheckedAt: NullableDateTime,
    latestMessage: Type.Union([Type.String(), Type.Null()]),
    latestErrorCode: Type.Union([Type.String(), Type.Null()]),
  },
  { title: 'ResourceStatus' },
);
export const MonitoringSnapshot = Type.Object({ resources: Type.Array(ResourceStatus) }, { title: 'MonitoringSnapshot' });

export const MONITORING_CHANNEL = 'monitoring';
export const CHECK_COMPLETED = 'CHECK_COMPLETED';
export const STATUS_CHANGED = 'STATUS_CHANGED';
