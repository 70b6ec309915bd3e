import { type Static, Type } from '@sinclair/typebox';
import { Body, DateTime, DateTimeInput, Id, NullableDateTime, StringEnum } from './common.ts';
import { Name } from './monitoring.ts';

/**
 * Maintenance windows: while one is open, checks of its resources
 * (directly or through a group) and its agents run and are recorded as usual,
 * but an incident opened then is marked `maintenance` and sends nothing.
 */
export const WINDOW_KINDS = ['ONE_OFF', 'WEEKLY'] as const;
export const WEEK_DAYS = ['MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT', 'SUN'] as const;
export type WeekDay = (typeof WEEK_DAYS)[number];

const Days = Type.Array(StringEnum(WEEK_DAYS), { minItems: 1, maxItems: 7, description: 'WEEKLY: the days it starts on' });
const StartTime = Type.String({ pattern: '^([01]\\d|2[0-3]):[0-5]\\d$', description: 'WEEKLY: local start time, HH:MM (24 h)' });
const DurationMinutes = Type.Integer({ minimum: 1, maximum: 10080, description: 'WEEKLY: minutes it stays open (up to a week)' });
const TimeZone = Type.String({ minLength: 1, maxLength: 100, description: 'WEEKLY: IANA time zone, e.g. Europe/Paris' });
const Ids = (what: string) => Type.Array(Id, { maxItems: 1000, description: `ids of ${what}` });

export const MaintenanceWindow = Type.Object(
  {
    id: Id,
    name: Type.String(),
    kind: StringEnum(WINDOW_KINDS),
    startsAt: Type.Union([DateTime, Type.Null()], { description: 'ONE_OFF' }),
    endsAt: Type.Union([DateTime, Type.Null()], { description: 'ONE_OFF' }),
    days: Type.Union([Type.Array(StringEnum(WEEK_DAYS)), Type.Null()]),
    startTime: Type.Union([Type.String(), Type.Null()]),
    durationMinutes: Type.Union([Type.Integer(), Type.Null()]),
    timeZone: Type.Union([Type.String(), Type.Null()]),
    resourceIds: Type.Array(Id),
    groupIds: Type.Array(Id),
    agentIds: Type.Array(Id),
    activeNow: Type.Boolean(),
    nextStart: Type.Union([DateTime, Type.Null()], { description: 'the opening in progress, else the next one; null when none is left' }),
    nextEnd: NullableDateTime,
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { title: 'MaintenanceWindow' },
);
export type MaintenanceWindow = Static<typeof MaintenanceWindow>;

const fields = {
  startsAt: Type.Optional(DateTimeInput),
  endsAt: Type.Optional(DateTimeInput),
  days: Type.Optional(Days),
  startTime: Type.Optional(StartTime),
  durationMinutes: Type.Optional(DurationMinutes),
  timeZone: Type.Optional(TimeZone),
  resourceIds: Type.Optional(Ids('resources')),
  groupIds: Type.Optional(Ids('groups (their resources)')),
  agentIds: Type.Optional(Ids('tunnel agents')),
};

export const MaintenanceCreate = Body({ name: Name, kind: StringEnum(WINDOW_KINDS), ...fields }, 'MaintenanceCreate');
export const MaintenanceUpdate = Body(
  { name: Type.Optional(Name), kind: Type.Optional(StringEnum(WINDOW_KINDS)), ...fields },
  'MaintenanceUpdate',
);
export type MaintenanceCreate = Static<typeof MaintenanceCreate>;
export type MaintenanceUpdate = Static<typeof MaintenanceUpdate>;
