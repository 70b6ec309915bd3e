import { Type } from '@sinclair/typebox';
import { Body, DateTime, Id, StringEnum } from './common.ts';
import { ALERT_EVENT_KINDS } from '../kinds.ts';
import { SEVERITIES } from '../../notifier-fields.ts';

export { ALERT_EVENT_KINDS };
export type AlertEventKind = (typeof ALERT_EVENT_KINDS)[number];

// No `uniqueItems`: TypeBox hashes the whole array for it before checking the items' types, so a
// deeply nested array overflows the stack. Duplicates are dropped by the handler instead.
const Ids = (what: string) => Type.Array(Id, { maxItems: 1000, description: `${what} (duplicates are ignored)` });

const ruleFields = {
  name: Type.String({ minLength: 1, maxLength: 100, pattern: '^[^\\u0000-\\u001f]+$' }),
  enabled: Type.Optional(Type.Boolean({ default: true })),
  events: Type.Array(StringEnum(ALERT_EVENT_KINDS), { minItems: 1, maxItems: 20, description: 'the alert events the rule routes' }),
  notifierIds: Type.Array(Id, { minItems: 1, maxItems: 100, description: 'where they go' }),
  resourceIds: Type.Optional(Ids('resources the rule covers')),
  groupIds: Type.Optional(Ids('groups whose resources the rule covers')),
  agentIds: Type.Optional(Ids('agents the rule covers')),
  severities: Type.Optional(
    Type.Array(StringEnum(SEVERITIES), {
      minItems: 1,
      maxItems: 3,
      description: 'the resource severities the rule covers (default all; agents and certificates count as critical)',
    }),
  ),
  severityOverride: Type.Optional(
    Type.Union([StringEnum(SEVERITIES), Type.Null()], {
      description: "what PAGERDUTY and OPSGENIE receive for this rule's alerts instead of the resource's severity (null: the resource's)",
    }),
  ),
  groupWaitSeconds: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 3600,
      default: 30,
      description: 'alerts to one notifier starting within this many seconds of the first leave as one message',
    }),
  ),
  repeatIntervalMinutes: Type.Optional(
    Type.Number({
      minimum: 0,
      maximum: 43200,
      default: 240,
      description: 'remind while an incident stays open, every this many minutes (0: never; fractions allowed, at least one second)',
    }),
  ),
};

export const AlertRuleBody = Body(ruleFields, 'AlertRuleBody');
export const AlertRule = Type.Object(
  {
    id: Id,
    name: Type.String(),
    enabled: Type.Boolean(),
    events: Type.Array(StringEnum(ALERT_EVENT_KINDS)),
    notifierIds: Type.Array(Id),
    resourceIds: Type.Array(Id),
    groupIds: Type.Array(Id),
    agentIds: Type.Array(Id),
    scope: StringEnum(['ALL', 'LISTED'] as const, { description: 'ALL when no resource, group or agent is listed' }),
    severities: Type.Array(StringEnum(SEVERITIES)),
    severityOverride: Type.Union([StringEnum(SEVERITIES), Type.Null()]),
    groupWaitSeconds: Type.Integer(),
    repeatIntervalMinutes: Type.Number(),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { title: 'AlertRule' },
);

/** `NOTIFICATION_FAILED` on /api/events (ADMIN only): a notification gave up. */
export const NOTIFICATION_FAILED = 'NOTIFICATION_FAILED';
export const NotificationFailed = Type.Object(
  {
    notifierId: Id,
    notificationId: Id,
    messageId: Type.String(),
    attempts: Type.Integer(),
    error: Type.String(),
    at: DateTime,
  },
  { title: 'NotificationFailed' },
);
