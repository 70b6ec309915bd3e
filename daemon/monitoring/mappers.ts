import { SEVERITIES, type Severity } from '../../src/notifier-fields.ts';
import type { HttpCheckView } from '../../src/api/schemas/http-check.ts';
import type { PushView } from '../../src/api/schemas/push.ts';
import type { Selectable } from 'kysely';
import type { Static } from '@sinclair/typebox';
import type {
  AdminResource,
  CheckStatus,
  Group,
  HistoryEntry,
  Quorum,
  Resource,
  ResourceDetail,
  ResourceListItem,
  ResourceType,
  Visibility,
} from '../../src/api/schemas/monitoring.ts';
import { QUORUMS } from '../../src/api/schemas/monitoring.ts';
import { formatDateTime, formatNullable } from '../../src/time.ts';
import type { CheckHistoryTable, CheckOutcomesTable, GroupsTable, ResourceRow } from '../store/schema.ts';
import { DAEMON_LOCATION, type Location } from '../probes/locations.ts';
import { isDaemonOnly, locationNames } from '../probes/resource-locations.ts';
import { timingOf } from '../probes/check-timing.ts';
import { conditionsOf } from '../probes/resource-conditions.ts';
import { plainOf } from '../probes/http-request-store.ts';
import { effectiveStatus } from '../probes/results.ts';
import { pingDetailOf } from '../probes/ping-columns.ts';
import { optionsView } from '../probes/check-options.ts';

/** Database rows to the API's JSON shapes. */
export type GroupRef = { id: number; name: string };

export function toResource(row: ResourceRow): Static<typeof Resource> {
  return {
    id: row.id,
    name: row.name,
    resourceType: row.resource_type as ResourceType,
    target: row.target,
    skipTLS: row.skip_tls === 1,
    recursive: row.recursive === 1,
    active: row.active === 1,
    createdAt: formatDateTime(row.created_at),
  };
}

function statusOf(row: ResourceRow) {
  return {
    currentStatus: effectiveStatus(row.active, row.current_status),
    latestCheckStatus: (row.latest_check_status as CheckStatus | null) ?? null,
    latestCheckedAt: formatNullable(row.latest_checked_at),
  };
}

/** List item: the resource plus its status, all from the row itself (no query per item). */
export function toListItem(row: ResourceRow): Static<typeof ResourceListItem> {
  return { ...toResource(row), ...statusOf(row) };
}

/** Detail: `groups` sorted by id, the first one also as the legacy `groupId`/`groupName`. */
export function toDetail(row: ResourceRow, groups: GroupRef[]): Static<typeof ResourceDetail> {
  const sorted = [...groups].sort((a, b) => a.id - b.id);
  return {
    ...toResource(row),
    groupId: sorted[0]?.id ?? null,
    groupName: sorted[0]?.name ?? null,
    groups: sorted.map((g) => ({ id: g.id, name: g.name })),
    ...statusOf(row),
    latestMessage: row.latest_message,
    latestErrorCode: row.latest_error_code,
  };
}

/**
 * The admin view: the detail plus the schedule, the incident thresholds, maintenance, the certificate,
 * where it is checked (`locations`: names, the daemon alone when none are given), and a PUSH
 * resource's ping URLs and schedule (`push`, null for the other types).
 */
export function toAdminResource(
  row: ResourceRow,
  groups: GroupRef[],
  inMaintenance: boolean,
  locations: readonly Location[] = [DAEMON_LOCATION],
  push: PushView | null = null,
  dependsOn: GroupRef[] = [],
): Static<typeof AdminResource> {
  return {
    ...toDetail(row, groups),
    intervalSeconds: row.interval_seconds,
    failureThreshold: Number(row.failure_threshold),
    successThreshold: Number(row.success_threshold),
    inMaintenance,
    certExpiresAt: formatNullable(row.cert_expires_at === null ? null : Number(row.cert_expires_at)),
    locations: locationNames(locations),
    quorum: (QUORUMS as readonly string[]).includes(row.quorum) ? (row.quorum as Quorum) : 'majority',
    conditions: conditionsOf(row.conditions),
    severity: (SEVERITIES as readonly string[]).includes(row.severity) ? (row.severity as Severity) : 'critical',
    dependsOn,
    latestTiming: isDaemonOnly(locations) ? timingOf(row.latest_timing) : null,
    ...httpCheckView(row),
    push,
    ...optionsView(row.resource_type, row.check_options),
  };
}

/** The request fields as reads show them: the stored ones over the seed's defaults; secrets only named. */
export function httpCheckView(row: ResourceRow): HttpCheckView {
  const p = plainOf(row.http_request);
  return {
    method: p.method ?? SEED_HTTP_CHECK.method,
    headers: p.headers ?? {},
    body: p.body ?? null,
    contentType: p.contentType ?? null,
    auth: p.auth ?? null,
    followRedirects: p.followRedirects ?? true,
    expectStatus: p.expectStatus ?? SEED_HTTP_CHECK.expectStatus,
    timeoutSeconds: row.timeout_seconds === null ? null : Number(row.timeout_seconds),
    upsideDown: row.upside_down === 1,
    secrets: { headers: p.secretHeaders ?? [], clientCert: p.clientCert === true },
  };
}

/** The request fields of a resource that sets none: the seed's GET, 2xx, the daemon's timeout. */
const SEED_HTTP_CHECK: HttpCheckView = {
  method: 'GET',
  headers: {},
  body: null,
  contentType: null,
  auth: null,
  followRedirects: true,
  expectStatus: ['200-299'],
  timeoutSeconds: null,
  upsideDown: false,
  secrets: { headers: [], clientCert: false },
};

/** A history row; with `withPing` (ADMIN reads), a push check's ping from its columns (`ping_body` a preview). */
export function toHistoryEntry(
  row: Omit<Selectable<CheckHistoryTable>, 'outcome_id' | 'changed'> &
    Pick<Selectable<CheckOutcomesTable>, 'status' | 'message' | 'error_code'> & {
      location: string | null;
      ping: string | null;
      ping_body?: string | null;
    },
  withPing = false,
): HistoryEntry {
  const entry: HistoryEntry = {
    id: row.id,
    status: row.status === 'AVAILABLE' ? 'AVAILABLE' : 'NOT_AVAILABLE',
    message: row.message ?? '',
    errorCode: row.error_code,
    checkedAt: formatDateTime(row.checked_at),
    durationMs: row.duration_ms,
    location: row.location ?? 'daemon',
  };
  const ping = withPing ? pingDetailOf(row.ping, row.ping_body ?? null) : undefined;
  return ping ? { ...entry, ping } : entry;
}

export function toGroup(row: Selectable<GroupsTable>): Static<typeof Group> {
  return {
    id: row.id,
    name: row.name,
    visibility: row.visibility as Visibility,
    createdAt: formatDateTime(row.created_at),
    updatedAt: formatDateTime(row.updated_at),
  };
}
