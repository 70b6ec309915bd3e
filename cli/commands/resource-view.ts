import type { Static } from '@sinclair/typebox';
import type { AdminResource, HistoryEntry, LocationResult } from '../../src/api/schemas/monitoring.ts';
import type { Column, View } from '../output/render.ts';
import { checkOptionColumns } from './check-options-view.ts';
import { pushColumns } from './push-view.ts';
import { timingLine } from './resource-test-report.ts';

/**
 * How `resources list|get|history` show resources and check results. `get` of one resource shows
 * every column as FIELD/VALUE lines; the request fields there say which secrets are set, never
 * their values (the daemon never returns them).
 */
/** Admins see AdminResource; others the public list item or detail (fields may be absent). */
export type R = Partial<Static<typeof AdminResource>> & {
  id: number;
  name: string;
  incidents?: Array<{ id: number; openedAt: string; resolvedAt: string | null }>;
  locationResults?: LocationResult[];
};

/** `office: not_available (503 Service Unavailable)`; an unknown location with its reason. */
function byLocation(l: LocationResult): string {
  return l.status === 'available' || !l.message ? `${l.location}: ${l.status}` : `${l.location}: ${l.status} (${l.message})`;
}

const http = (r: R) => r.resourceType === 'HTTP' && r.method !== undefined;
const clip = (text: string) => (text.length > 60 ? `${text.slice(0, 57)}...` : text);

/** The request and expected answer (admin views), in `resources get` only; `-` where nothing is set. */
const requestColumns: Column<R>[] = [
  { header: 'METHOD', get: (r) => (http(r) ? r.method : undefined), detail: true },
  { header: 'HEADERS', get: (r) => (http(r) ? Object.entries(r.headers ?? {}).map(([k, v]) => `${k}: ${v}`) : undefined), detail: true },
  { header: 'SECRET HEADERS', get: (r) => r.secrets?.headers.map((h) => `${h} (set)`), detail: true },
  {
    header: 'BODY',
    get: (r) => (r.body == null ? undefined : `${clip(JSON.stringify(r.body))} (${r.contentType ?? 'text/plain'})`),
    detail: true,
  },
  {
    header: 'AUTH',
    get: (r) => (r.auth ? (r.auth.type === 'basic' ? `basic: user ${r.auth.username}, password set` : 'bearer: token set') : undefined),
    detail: true,
  },
  { header: 'CLIENT CERT', get: (r) => (r.secrets && http(r) ? (r.secrets.clientCert ? 'set' : 'not set') : undefined), detail: true },
  {
    header: 'TIMEOUT',
    get: (r) => (r.timeoutSeconds === undefined ? undefined : r.timeoutSeconds === null ? "the daemon's" : `${r.timeoutSeconds}s`),
    detail: true,
  },
  {
    header: 'REDIRECTS',
    get: (r) => (http(r) && r.followRedirects !== undefined ? (r.followRedirects ? 'followed (10 at most)' : 'not followed') : undefined),
    detail: true,
  },
  { header: 'EXPECT STATUS', get: (r) => (http(r) ? r.expectStatus : undefined), detail: true },
  { header: 'UPSIDE DOWN', get: (r) => (r.upsideDown === undefined ? undefined : r.upsideDown ? 'yes' : 'no'), detail: true },
];

export const view: View<R> = {
  columns: [
    { header: 'ID', get: (r) => r.id },
    { header: 'NAME', get: (r) => r.name },
    { header: 'TYPE', get: (r) => r.resourceType },
    { header: 'TARGET', get: (r) => r.target },
    { header: 'STATUS', get: (r) => r.currentStatus, status: true },
    { header: 'CHECKED', get: (r) => r.latestCheckedAt },
    { header: 'MESSAGE', get: (r) => r.latestMessage, wide: true },
    { header: 'ERROR', get: (r) => r.latestErrorCode, wide: true },
    // The latest check's phases (admin views; null for DOCKER and several locations).
    { header: 'TIMING', get: (r) => timingLine(r.latestTiming), wide: true },
    { header: 'INTERVAL', get: (r) => r.intervalSeconds, wide: true },
    { header: 'GROUPS', get: (r) => r.groups?.map((g) => g.name), wide: true },
    { header: 'ACTIVE', get: (r) => r.active, wide: true },
    { header: 'SKIP TLS', get: (r) => r.skipTLS, wide: true },
    { header: 'RECURSIVE', get: (r) => r.recursive, wide: true },
    {
      header: 'THRESHOLDS',
      get: (r) => (r.failureThreshold === undefined ? undefined : `${r.failureThreshold} down / ${r.successThreshold} up`),
      wide: true,
    },
    { header: 'MAINTENANCE', get: (r) => (r.inMaintenance === undefined ? undefined : r.inMaintenance ? 'yes' : 'no'), wide: true },
    { header: 'CERT EXPIRES', get: (r) => r.certExpiresAt, wide: true },
    { header: 'LOCATIONS', get: (r) => r.locations, wide: true },
    { header: 'QUORUM', get: (r) => r.quorum, wide: true },
    { header: 'SEVERITY', get: (r) => r.severity, wide: true },
    { header: 'DEPENDS ON', get: (r) => (r.dependsOn?.length ? r.dependsOn.map((d) => d.name) : undefined), wide: true },
    { header: 'CONDITIONS', get: (r) => (r.conditions?.length ? r.conditions : undefined), wide: true },
    ...requestColumns,
    ...checkOptionColumns,
    ...pushColumns,
    // The admin detail: the latest result at each location (unknown says why).
    { header: 'BY LOCATION', get: (r) => r.locationResults?.map(byLocation).join('; '), wide: true },
    // The admin detail's recent incidents (`monctl incidents list --resource NAME` lists them all).
    {
      header: 'OPEN INCIDENT',
      get: (r) => r.incidents?.filter((i) => i.resolvedAt === null).map((i) => `#${i.id} since ${i.openedAt}`),
      wide: true,
    },
    { header: 'CREATED', get: (r) => r.createdAt, wide: true },
  ],
};

export const historyView: View<HistoryEntry> = {
  columns: [
    { header: 'ID', get: (h) => h.id },
    { header: 'CHECKED', get: (h) => h.checkedAt },
    { header: 'STATUS', get: (h) => h.status, status: true },
    { header: 'LOCATION', get: (h) => h.location },
    { header: 'MS', get: (h) => h.durationMs },
    { header: 'ERROR', get: (h) => h.errorCode },
    { header: 'MESSAGE', get: (h) => h.message },
  ],
};
