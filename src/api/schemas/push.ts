import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { MAX_PING_BODY_BYTES, PING_KINDS } from '../kinds.ts';
import { Body, DateTime, Id, NullableDateTime, StringEnum } from './common.ts';

/**
 * Push checks (docs/API.md#push-checks): a PUSH resource is not checked; it
 * waits for pings at `/ping/{uuid}` (or `/ping/{pingKey}/{slug}`) and turns
 * NOT_AVAILABLE (`MISSED_PING`) when none arrives by its deadline plus grace.
 * Its `target` is its slug; the uuid, the secret of its ping URL, shows in
 * admin views only.
 */
export { MAX_PING_BODY_BYTES, PING_KINDS };
export type PingKind = (typeof PING_KINDS)[number];

/** History lists show this much of a ping's body; the whole kept body has its own endpoint. */
export const PING_BODY_PREVIEW_BYTES = 1024;
export const MAX_PERIOD_SECONDS = 365 * 86400;
export const DEFAULT_PERIOD_SECONDS = 86400;
export const DEFAULT_GRACE_SECONDS = 3600;
export const SLUG_PATTERN = '^[a-z0-9](?:[a-z0-9_-]{0,98}[a-z0-9])?$';
export const SLUG_RE = new RegExp(SLUG_PATTERN);

/** Create and PATCH fields of a PUSH resource (PATCH: null removes cron or period, switching to the other). */
export function pushCheckFields(nullable: boolean) {
  const opt = <T extends TSchema>(schema: T) => Type.Optional(nullable ? Type.Union([schema, Type.Null()]) : schema);
  return {
    periodSeconds: opt(
      Type.Integer({
        minimum: 10,
        maximum: MAX_PERIOD_SECONDS,
        description: 'PUSH: a ping is expected this often (default 86400 when no cron is given); not with cron',
      }),
    ),
    cron: opt(
      Type.String({
        minLength: 1,
        maxLength: 120,
        description: 'PUSH: a ping is expected at each time of this cron expression (5 or 6 fields, croner syntax); not with periodSeconds',
      }),
    ),
    timezone: opt(Type.String({ minLength: 1, maxLength: 64, description: 'PUSH: the IANA time zone of cron (default UTC)' })),
    graceSeconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_PERIOD_SECONDS,
        description: 'PUSH: how late a ping may be before the check is NOT_AVAILABLE (default 3600)',
      }),
    ),
  };
}

/** What admin reads show of a PUSH resource (`push`, null for the other types). */
export const PushView = Type.Object(
  {
    uuid: Type.String({ format: 'uuid', description: 'the secret of its ping URL' }),
    pingUrl: Type.String({ description: "`/ping/{uuid}`, absolute when the daemon's publicUrl is set" }),
    slug: Type.String({ description: 'its slug (also its `target`)' }),
    slugUrl: Type.Union([Type.String(), Type.Null()], {
      description: "`/ping/{pingKey}/{slug}` with the key that applies (its first group with a key, else the daemon's); null when none",
    }),
    periodSeconds: Type.Union([Type.Integer(), Type.Null()]),
    cron: Type.Union([Type.String(), Type.Null()]),
    timezone: Type.Union([Type.String(), Type.Null()]),
    graceSeconds: Type.Integer(),
    lastPingAt: NullableDateTime,
    lastPingKind: Type.Union([StringEnum(PING_KINDS), Type.Null()]),
    startedAt: Type.Union([DateTime, Type.Null()], { description: 'a run that started and has not finished' }),
    lateAt: Type.Union([DateTime, Type.Null()], {
      description: 'when it turns NOT_AVAILABLE unless a ping comes first; null once judged late (until the next ping)',
    }),
  },
  { title: 'PushView' },
);
export type PushView = Static<typeof PushView>;

/** A ping's own fields on its history entry (ADMIN reads only: the source and the body may be private). */
export const PingDetail = Type.Object(
  {
    kind: StringEnum(PING_KINDS),
    exitCode: Type.Union([Type.Integer({ minimum: 0, maximum: 255 }), Type.Null()]),
    sourceIp: Type.String(),
    userAgent: Type.Union([Type.String(), Type.Null()]),
    runMs: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'a finish after a start: how long the run took' }),
    body: Type.Union([Type.String(), Type.Null()], { description: `the body's first ${PING_BODY_PREVIEW_BYTES} bytes, as text` }),
    bodyBytes: Type.Integer({ minimum: 0, description: 'the bytes kept' }),
    bodyTruncated: Type.Boolean({ description: `the body was longer than ${MAX_PING_BODY_BYTES} bytes and was cut` }),
  },
  { title: 'PingDetail' },
);
export type PingDetail = Static<typeof PingDetail>;

/** A ping key: `/ping/{key}/{slug}` pings the daemon's push checks, or a group's. */
export const PingKey = Type.Object(
  {
    id: Id,
    key: Type.String(),
    groupId: Type.Union([Id, Type.Null()], { description: "null: the daemon's key" }),
    groupName: Type.Union([Type.String(), Type.Null()]),
    allowCreate: Type.Boolean({ description: '`?create=1` creates a PUSH resource for an unknown slug' }),
    createdAt: DateTime,
  },
  { title: 'PingKey' },
);
export const PingKeyCreate = Body(
  {
    groupId: Type.Optional(Type.Union([Id, Type.Null()], { description: "the group whose key it is; absent or null: the daemon's" })),
    allowCreate: Type.Optional(Type.Boolean({ description: 'default false' })),
  },
  'PingKeyCreate',
);
