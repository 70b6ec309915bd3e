import type { Kysely, Transaction } from 'kysely';
import {
  type MaintenanceCreate,
  type MaintenanceUpdate,
  type MaintenanceWindow,
  WEEK_DAYS,
  type WeekDay,
} from '../../../src/api/schemas/maintenance.ts';
import { invalidField } from '../../../src/errors.ts';
import { formatDateTime, parseDateTime } from '../../../src/time.ts';
import type { Database } from '../../store/schema.ts';
import { scheduleOf, type WindowRow } from './cache.ts';
import { currentOrNext } from './schedule.ts';
import { isTimeZone } from './zoned-time.ts';

/** A window as stored, checked field by field. */
export interface WindowDraft {
  name: string;
  kind: 'ONE_OFF' | 'WEEKLY';
  startsAt: number | null;
  endsAt: number | null;
  days: WeekDay[] | null;
  startTime: string | null;
  durationMinutes: number | null;
  timeZone: string | null;
  resourceIds: number[];
  groupIds: number[];
  agentIds: number[];
}

const ONE_OFF_FIELDS = ['startsAt', 'endsAt'] as const;
const WEEKLY_FIELDS = ['days', 'startTime', 'durationMinutes', 'timeZone'] as const;
type Input = MaintenanceCreate | MaintenanceUpdate;

function instant(field: 'startsAt' | 'endsAt', text: string | undefined): number | null {
  if (text === undefined) return null;
  const ms = parseDateTime(text);
  if (ms === undefined) throw invalidField(field, 'must be YYYY-MM-DDTHH:MM:SS or ISO-8601 with an offset');
  return ms;
}

/** The fields of the other kind are a mistake worth a 400, not silence. */
function rejectForeign(kind: WindowDraft['kind'], body: Input): void {
  const foreign = kind === 'ONE_OFF' ? WEEKLY_FIELDS : ONE_OFF_FIELDS;
  for (const field of foreign) {
    if (body[field] !== undefined) throw invalidField(field, `only ${kind === 'ONE_OFF' ? 'WEEKLY' : 'ONE_OFF'} windows have ${field}`);
  }
}

const unique = (ids: number[]) => [...new Set(ids)];
const sortDays = (days: WeekDay[]) => WEEK_DAYS.filter((d) => days.includes(d));

export function draftFromCreate(body: MaintenanceCreate): WindowDraft {
  rejectForeign(body.kind, body);
  return checkDraft({
    name: body.name,
    kind: body.kind,
    startsAt: instant('startsAt', body.startsAt),
    endsAt: instant('endsAt', body.endsAt),
    days: body.days ? sortDays(body.days) : null,
    startTime: body.startTime ?? null,
    durationMinutes: body.durationMinutes ?? null,
    timeZone: body.timeZone ?? null,
    resourceIds: unique(body.resourceIds ?? []),
    groupIds: unique(body.groupIds ?? []),
    agentIds: unique(body.agentIds ?? []),
  });
}

/** PUT: given fields replace the stored ones; a change of kind drops the old kind's fields. */
export function draftFromUpdate(row: WindowRow, body: MaintenanceUpdate): WindowDraft {
  const kind = body.kind ?? row.kind;
  rejectForeign(kind, body);
  const same = kind === row.kind;
  const stored = scheduleOf(row);
  const keep = <T>(value: T | undefined, old: T | null) => (value !== undefined ? value : same ? old : null);
  const ids = (value: number[] | undefined, old: string) => unique(value ?? (JSON.parse(old) as number[]));
  return checkDraft({
    name: body.name ?? row.name,
    kind,
    startsAt: body.startsAt !== undefined ? instant('startsAt', body.startsAt) : same ? Number(row.starts_at) : null,
    endsAt: body.endsAt !== undefined ? instant('endsAt', body.endsAt) : same ? Number(row.ends_at) : null,
    days: keep(body.days ? sortDays(body.days) : undefined, stored.kind === 'WEEKLY' ? sortDays(stored.days as WeekDay[]) : null),
    startTime: keep(body.startTime, row.start_time),
    durationMinutes: keep(body.durationMinutes, row.duration_minutes === null ? null : Number(row.duration_minutes)),
    timeZone: keep(body.timeZone, row.time_zone),
    resourceIds: ids(body.resourceIds, row.resource_ids),
    groupIds: ids(body.groupIds, row.group_ids),
    agentIds: ids(body.agentIds, row.agent_ids),
  });
}

function checkDraft(d: WindowDraft): WindowDraft {
  if (d.kind === 'ONE_OFF') {
    if (d.startsAt === null) throw invalidField('startsAt', 'is required for ONE_OFF windows');
    if (d.endsAt === null) throw invalidField('endsAt', 'is required for ONE_OFF windows');
    if (d.endsAt <= d.startsAt) throw invalidField('endsAt', 'must be after startsAt');
  } else {
    for (const field of WEEKLY_FIELDS) if (d[field] === null) throw invalidField(field, 'is required for WEEKLY windows');
    if (!isTimeZone(d.timeZone!)) throw invalidField('timeZone', `is not an IANA time zone such as Europe/Paris: ${d.timeZone}`);
  }
  if (d.resourceIds.length + d.groupIds.length + d.agentIds.length === 0) {
    throw invalidField('resourceIds', 'a window needs at least one resource, group or agent (resourceIds, groupIds, agentIds)');
  }
  return d;
}

/** Every target id exists: 400 naming the field otherwise. */
export async function checkTargets(db: Kysely<Database> | Transaction<Database>, d: WindowDraft): Promise<void> {
  const tables = [
    ['resourceIds', 'resources', d.resourceIds],
    ['groupIds', 'groups', d.groupIds],
    ['agentIds', 'agents', d.agentIds],
  ] as const;
  for (const [field, table, ids] of tables) {
    if (ids.length === 0) continue;
    const found = new Set((await db.selectFrom(table).select('id').where('id', 'in', ids).execute()).map((r) => Number(r.id)));
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length) throw invalidField(field, `no ${table.slice(0, -1)} with id ${missing.join(', ')}`);
  }
}

export function columns(d: WindowDraft) {
  return {
    name: d.name,
    kind: d.kind,
    starts_at: d.startsAt,
    ends_at: d.endsAt,
    days: d.days ? JSON.stringify(d.days) : null,
    start_time: d.startTime,
    duration_minutes: d.durationMinutes,
    time_zone: d.timeZone,
    resource_ids: JSON.stringify(d.resourceIds),
    group_ids: JSON.stringify(d.groupIds),
    agent_ids: JSON.stringify(d.agentIds),
  };
}

/** A stored window as the API shows it, with whether it is open at `now` and its current or next opening. */
export function toWindow(row: WindowRow, now = Date.now()): MaintenanceWindow {
  const occurrence = currentOrNext(scheduleOf(row), now);
  const weekly = row.kind === 'WEEKLY';
  const list = (text: string) => JSON.parse(text) as number[];
  return {
    id: Number(row.id),
    name: row.name,
    kind: row.kind,
    startsAt: weekly || row.starts_at === null ? null : formatDateTime(Number(row.starts_at)),
    endsAt: weekly || row.ends_at === null ? null : formatDateTime(Number(row.ends_at)),
    days: weekly ? sortDays(JSON.parse(row.days ?? '[]')) : null,
    startTime: weekly ? row.start_time : null,
    durationMinutes: weekly && row.duration_minutes !== null ? Number(row.duration_minutes) : null,
    timeZone: weekly ? row.time_zone : null,
    resourceIds: list(row.resource_ids),
    groupIds: list(row.group_ids),
    agentIds: list(row.agent_ids),
    activeNow: occurrence !== undefined && occurrence.start <= now && now < occurrence.end,
    nextStart: occurrence ? formatDateTime(occurrence.start) : null,
    nextEnd: occurrence ? formatDateTime(occurrence.end) : null,
    createdAt: formatDateTime(Number(row.created_at)),
    updatedAt: formatDateTime(Number(row.updated_at)),
  };
}
