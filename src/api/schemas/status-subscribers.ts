import { Type } from '@sinclair/typebox';
import { Body, DateTime, Id, NullableDateTime, StringEnum } from './common.ts';

/** Subscribers of a status page (docs/API.md#subscriptions), as ADMIN sees them: addresses included. */
export const StatusSubscriber = Type.Object(
  {
    id: Id,
    kind: StringEnum(['EMAIL', 'WEBHOOK'] as const),
    address: Type.String({ description: 'the email address as given, or the webhook URL' }),
    resourceIds: Type.Array(Id, { description: 'what the subscriber picked; both empty: everything on the page' }),
    groupIds: Type.Array(Id),
    confirmed: Type.Boolean({ description: 'EMAIL: the owner clicked the confirmation link; WEBHOOK: always' }),
    createdAt: DateTime,
    confirmedAt: NullableDateTime,
    confirmSentAt: Type.Union([DateTime, Type.Null()], { description: 'EMAIL: when the last confirmation mail was enqueued' }),
  },
  { title: 'StatusSubscriber' },
);

const Picks = (what: string) => Type.Array(Id, { maxItems: 1000, description: `${what} shown on the page; none: everything` });

export const WebhookSubscriberCreate = Body(
  {
    url: Type.String({
      minLength: 1,
      maxLength: 2048,
      description: 'an absolute http or https URL; deliveries are signed (Standard Webhooks)',
    }),
    resourceIds: Type.Optional(Picks('resources')),
    groupIds: Type.Optional(Picks('groups')),
  },
  'WebhookSubscriberCreate',
);

export const WebhookSubscriberCreated = Type.Composite(
  [StatusSubscriber, Type.Object({ secret: Type.String({ description: '`whsec_…`: the signing secret, shown this once' }) })],
  { title: 'WebhookSubscriberCreated' },
);

export const SubscriberParams = Type.Object({ id: Id, subscriberId: Id });
