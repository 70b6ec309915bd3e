/**
 * `monctl status --watch`: resources with their status, last check and a
 * sparkline of recent checks, kept from the `/api/events` SNAPSHOT and the
 * CHECK_COMPLETED / STATUS_CHANGED events that follow, with open incidents
 * (INCIDENT_OPENED / INCIDENT_RESOLVED, and for ADMIN the open ones at start)
 * and maintenance (ADMIN, polled). Pure, for tests.
 */
export interface Check {
  status: 'AVAILABLE' | 'NOT_AVAILABLE';
  durationMs: number;
}

export interface Row {
  id: number;
  name: string;
  type: string;
  status: string;
  /** Epoch ms of the last check, when known. */
  checkedAt: number | null;
  durationMs: number | null;
  message: string | null;
  recent: Check[];
  /** The open incident: its id and when it opened (epoch ms). */
  incident?: { id: number; openedAt: number | null; maintenance: boolean } | null;
  /** A maintenance window covering it is open (ADMIN only). */
  maintenance?: boolean;
  /** Made from an event about a resource the snapshot did not have: name and type are not known yet. */
  partial?: boolean;
}

/** What the API says of a resource (`GET /api/resources/{id}`), to complete a partial row. */
export interface ResourceInfo {
  name: string;
  resourceType: string;
  currentStatus: string;
}

/** What the admin API says at start and every so often: open incidents and resources in maintenance. */
export interface Marks {
  incidents: Array<{ id: number; resourceId: number | null; openedAt: string; maintenance: boolean }>;
  inMaintenance: number[];
}

export type Rows = Map<number, Row>;

const SPARK = '▁▂▃▄▅▆▇█';
const KEEP = 20;

/** Wire datetimes carry no offset: read as the local time of this host (usually the daemon's host or zone). */
export const parseWire = (s: string | null | undefined): number | null => (s ? new Date(s).getTime() : null);

export function applyStatusEvent(rows: Rows, kind: string, data: any, now = Date.now()): Rows {
  const next = new Map(rows);
  if (kind === 'SNAPSHOT') {
    next.clear();
    for (const r of data.resources ?? []) {
      const old = rows.get(r.resourceId);
      next.set(r.resourceId, {
        id: r.resourceId,
        name: r.name,
        type: r.resourceType,
        status: r.currentStatus,
        checkedAt: parseWire(r.latestCheckedAt),
        durationMs: null,
        message: r.latestMessage,
        recent: [],
        incident: old?.incident,
        maintenance: old?.maintenance,
      });
    }
    return next;
  }
  const cur = next.get(data.resourceId);
  if (kind === 'CHECK_COMPLETED') {
    const base: Row = cur ?? {
      id: data.resourceId,
      name: `#${data.resourceId}`,
      type: '?',
      status: 'unknown',
      checkedAt: null,
      durationMs: null,
      message: null,
      recent: [],
      partial: true,
    };
    next.set(data.resourceId, {
      ...base,
      checkedAt: now,
      durationMs: data.durationMs,
      message: data.message,
      recent: [...base.recent, { status: data.status, durationMs: data.durationMs }].slice(-KEEP),
    });
  } else if (kind === 'INCIDENT_OPENED' && typeof data.resourceId === 'number') {
    if (cur)
      next.set(data.resourceId, {
        ...cur,
        incident: { id: data.id, openedAt: parseWire(data.openedAt), maintenance: Boolean(data.maintenance) },
      });
  } else if (kind === 'INCIDENT_RESOLVED' && typeof data.resourceId === 'number') {
    if (cur && (!cur.incident || cur.incident.id === data.id)) next.set(data.resourceId, { ...cur, incident: null });
  } else if (kind === 'STATUS_CHANGED') {
    const base: Row = cur ?? {
      id: data.resourceId,
      name: data.name,
      type: '?',
      status: data.to,
      checkedAt: null,
      durationMs: null,
      message: null,
      recent: [],
      partial: true,
    };
    next.set(data.resourceId, { ...base, name: data.name, status: data.to });
  }
  return next;
}

/** Completes a row made from events with what the API says of the resource; its checks are kept. */
export function applyResource(rows: Rows, id: number, info: ResourceInfo): Rows {
  const cur = rows.get(id);
  if (!cur) return rows;
  const next = new Map(rows);
  // The status seen on the stream is newer than the answer unless the stream has said nothing yet.
  next.set(id, {
    ...cur,
    name: info.name,
    type: info.resourceType,
    status: cur.status === 'unknown' ? info.currentStatus : cur.status,
    partial: false,
  });
  return next;
}

/** The admin marks replace what the rows knew of incidents and maintenance (events keep them current in between). */
export function applyMarks(rows: Rows, marks: Marks): Rows {
  const open = new Map(marks.incidents.filter((i) => i.resourceId !== null).map((i) => [i.resourceId!, i]));
  const maintenance = new Set(marks.inMaintenance);
  const next: Rows = new Map();
  for (const [id, row] of rows) {
    const i = open.get(id);
    next.set(id, {
      ...row,
      incident: i ? { id: i.id, openedAt: parseWire(i.openedAt), maintenance: i.maintenance } : null,
      maintenance: maintenance.has(id),
    });
  }
  return next;
}

/** The marks column: `incident 5m12s` while one is open, `maint` inside a window. */
export function marksOf(row: Row, now = Date.now()): { incident: string; maintenance: boolean } {
  return { incident: row.incident ? `incident ${age(row.incident.openedAt, now)}` : '', maintenance: Boolean(row.maintenance) };
}

/** One block per check, its height the duration relative to the slowest shown. */
export function sparkline(checks: Check[]): Array<{ char: string; ok: boolean }> {
  const max = Math.max(1, ...checks.map((c) => c.durationMs));
  return checks.map((c) => ({
    char: SPARK[Math.min(SPARK.length - 1, Math.floor((c.durationMs / max) * (SPARK.length - 1)))],
    ok: c.status === 'AVAILABLE',
  }));
}

export function age(checkedAt: number | null, now = Date.now()): string {
  if (checkedAt === null) return '-';
  const s = Math.max(0, Math.round((now - checkedAt) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** Problems first, open incidents before all: what an operator watches for. */
const RANK: Record<string, number> = { not_available: 0, unknown: 1, available: 2, inactive: 3 };

export function visibleRows(rows: Rows, filter: string): Row[] {
  const f = filter.toLowerCase();
  return [...rows.values()]
    .filter((r) => !f || r.name.toLowerCase().includes(f) || r.status.includes(f) || r.type.toLowerCase().includes(f))
    .sort(
      (a, b) => Number(!a.incident) - Number(!b.incident) || (RANK[a.status] ?? 9) - (RANK[b.status] ?? 9) || a.name.localeCompare(b.name),
    );
}
