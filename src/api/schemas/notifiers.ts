import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { Body, DateTime, Id, StringEnum } from './common.ts';
import { ObjectName } from './tunnel.ts';
import { EMAIL_SECURITIES, NOTIFIER_TYPES, OPSGENIE_REGIONS } from '../../notifier-fields.ts';
import { ALERT_EVENT_KINDS } from '../kinds.ts';

/**
 * Notification channels (docs/API.md#notifiers): where alerts are delivered. One body shape
 * for every type; which `config` fields a type takes is checked by the daemon,
 * which names the field that does not belong. Secret fields are write-only:
 * reads say which are set (`secrets`), never their values.
 */
export {
  EMAIL_SECURITIES,
  NOTIFIER_FIELDS,
  NOTIFIER_TYPES,
  NTFY_PRIORITIES,
  OPSGENIE_REGIONS,
  type NotifierType,
} from '../../notifier-fields.ts';

const Url = Type.String({ minLength: 1, maxLength: 2048, description: 'http:// or https://' });
const Email = Type.String({ minLength: 3, maxLength: 254, description: 'an email address' });
const Priority = Type.Union([Type.Integer(), Type.String()], {
  description: 'NTFY: 1 to 5, or min, low, default, high, max (default 3); PUSHOVER: -2 to 2 (default 0); GOTIFY: 0 to 10 (default 5)',
});
const ApiUrl = Type.String({
  ...Url,
  description: 'TELEGRAM, PAGERDUTY, OPSGENIE, PUSHOVER: replaces the provider API host (a proxy, a regional or self-hosted endpoint)',
});

/** Every config field, as create takes it; PATCH takes the same with null to remove an optional one. */
function configFields(nullable: boolean) {
  const opt = <T extends TSchema>(schema: T) => Type.Optional(nullable ? Type.Union([schema, Type.Null()]) : schema);
  return {
    url: opt(
      Type.String({
        ...Url,
        description:
          'WEBHOOK: where to POST; SLACK, DISCORD, TEAMS (a Workflows URL), GOOGLE_CHAT: the webhook URL (a secret); ' +
          'NTFY: the server, e.g. https://ntfy.sh; GOTIFY: the server',
      }),
    ),
    headers: opt(
      Type.Record(Type.String(), nullable ? Type.Union([Type.String(), Type.Null()]) : Type.String(), {
        description: 'WEBHOOK: extra request headers; the values are secrets. In PATCH, null removes one header',
      }),
    ),
    signingSecret: opt(Type.String({ description: 'WEBHOOK: `whsec_` + base64 of 24 to 64 bytes; generated when absent' })),
    topic: opt(Type.String({ description: 'NTFY: the topic, 1 to 64 of A-Z a-z 0-9 _ -' })),
    priority: opt(Priority),
    token: opt(
      Type.String({
        description:
          'a secret. NTFY: access token sent as Bearer; TELEGRAM: the bot token; PUSHOVER, GOTIFY: the application token; MATRIX: the access token',
      }),
    ),
    chatId: opt(Type.String({ maxLength: 64, description: 'TELEGRAM: the chat: a number (-100… for a channel) or @channelname' })),
    apiUrl: opt(ApiUrl),
    routingKey: opt(Type.String({ description: 'PAGERDUTY: the Events API v2 integration (routing) key (a secret)' })),
    apiKey: opt(Type.String({ description: 'OPSGENIE: the API integration key, sent as GenieKey (a secret)' })),
    region: opt(StringEnum(OPSGENIE_REGIONS, { description: 'OPSGENIE: US (api.opsgenie.com, default) or EU (api.eu.opsgenie.com)' })),
    userKey: opt(Type.String({ description: 'PUSHOVER: the user or group key (a secret)' })),
    retrySeconds: opt(
      Type.Integer({
        minimum: 30,
        maximum: 10800,
        description: 'PUSHOVER priority 2: repeat every this many seconds until acknowledged (default 60)',
      }),
    ),
    expireSeconds: opt(
      Type.Integer({
        minimum: 30,
        maximum: 10800,
        description: 'PUSHOVER priority 2: stop repeating after this many seconds (default 3600)',
      }),
    ),
    homeserver: opt(Type.String({ ...Url, description: 'MATRIX: the homeserver, e.g. https://matrix.example.org' })),
    roomId: opt(Type.String({ maxLength: 255, description: 'MATRIX: the room id (!abc:example.org) or alias (#ops:example.org)' })),
    host: opt(Type.String({ description: 'EMAIL: the SMTP server' })),
    port: opt(Type.Integer({ minimum: 1, maximum: 65535, description: 'EMAIL: 587 for STARTTLS, 465 for TLS, 25 for NONE when absent' })),
    security: opt(StringEnum(EMAIL_SECURITIES, { description: 'EMAIL: STARTTLS (default), TLS from the first byte, or NONE' })),
    username: opt(Type.String({ description: 'EMAIL: SMTP AUTH user (needs password)' })),
    password: opt(Type.String({ description: 'EMAIL: SMTP AUTH password (a secret)' })),
    from: opt(Email),
    to: opt(Type.Array(Email, { minItems: 1, maxItems: 50, description: 'EMAIL: recipients' })),
    skipTlsVerify: opt(Type.Boolean({ description: 'EMAIL: accept any server certificate (prefer tlsCa)' })),
    tlsCa: opt(
      Type.String({
        maxLength: 65536,
        description: 'EMAIL: PEM CA certificate(s) to trust for the SMTP server, besides the default roots',
      }),
    ),
  };
}

export const NotifierConfigInput = Type.Object(configFields(false), { additionalProperties: false, title: 'NotifierConfigInput' });
export const NotifierConfigPatch = Type.Object(configFields(true), { additionalProperties: false, title: 'NotifierConfigPatch' });

const Template = (what: string) =>
  Type.String({
    maxLength: 8192,
    description: `a Liquid template of the ${what} (docs/API.md#message-templates); absent: the default message`,
  });

export const NotifierCreate = Body(
  {
    name: ObjectName,
    type: StringEnum(NOTIFIER_TYPES),
    enabled: Type.Optional(Type.Boolean()),
    config: NotifierConfigInput,
    titleTemplate: Type.Optional(Template('title')),
    bodyTemplate: Type.Optional(Template('body')),
  },
  'NotifierCreate',
);
export const NotifierPatch = Body(
  {
    name: Type.Optional(ObjectName),
    enabled: Type.Optional(Type.Boolean()),
    config: Type.Optional(NotifierConfigPatch),
    titleTemplate: Type.Optional(Type.Union([Template('title'), Type.Null()])),
    bodyTemplate: Type.Optional(Type.Union([Template('body'), Type.Null()])),
  },
  'NotifierPatch',
);

/** The config as read back: no secret values. A secret webhook URL shows only its origin. */
export const NotifierConfig = Type.Object(
  {
    url: Type.Optional(Type.String()),
    origin: Type.Optional(Type.String({ description: 'SLACK, DISCORD, TEAMS, GOOGLE_CHAT: scheme and host of the webhook URL' })),
    topic: Type.Optional(Type.String()),
    priority: Type.Optional(Type.Integer({ minimum: -2, maximum: 10 })),
    chatId: Type.Optional(Type.String()),
    apiUrl: Type.Optional(Type.String()),
    region: Type.Optional(StringEnum(OPSGENIE_REGIONS)),
    retrySeconds: Type.Optional(Type.Integer()),
    expireSeconds: Type.Optional(Type.Integer()),
    homeserver: Type.Optional(Type.String()),
    roomId: Type.Optional(Type.String()),
    host: Type.Optional(Type.String()),
    port: Type.Optional(Type.Integer()),
    security: Type.Optional(StringEnum(EMAIL_SECURITIES)),
    username: Type.Optional(Type.String()),
    from: Type.Optional(Type.String()),
    to: Type.Optional(Type.Array(Type.String())),
    skipTlsVerify: Type.Optional(Type.Boolean()),
    tlsCa: Type.Optional(Type.String()),
  },
  { title: 'NotifierConfig' },
);

/** Which secrets are set: true for a set secret field, the names of the headers for `headers`. */
export const NotifierSecrets = Type.Object(
  {
    url: Type.Optional(Type.Boolean()),
    signingSecret: Type.Optional(Type.Boolean()),
    headers: Type.Optional(Type.Array(Type.String())),
    token: Type.Optional(Type.Boolean()),
    password: Type.Optional(Type.Boolean()),
    routingKey: Type.Optional(Type.Boolean()),
    apiKey: Type.Optional(Type.Boolean()),
    userKey: Type.Optional(Type.Boolean()),
  },
  { title: 'NotifierSecrets' },
);

const notifierFields = {
  id: Id,
  name: Type.String(),
  type: StringEnum(NOTIFIER_TYPES),
  enabled: Type.Boolean(),
  config: NotifierConfig,
  secrets: NotifierSecrets,
  titleTemplate: Type.Union([Type.String(), Type.Null()]),
  bodyTemplate: Type.Union([Type.String(), Type.Null()]),
  createdAt: DateTime,
  updatedAt: DateTime,
};
export const Notifier = Type.Object(notifierFields, { title: 'Notifier' });
export type Notifier = Static<typeof Notifier>;

export const NotifierCreated = Type.Object(
  {
    ...notifierFields,
    signingSecret: Type.Optional(Type.String({ description: 'WEBHOOK: the signing secret, in this response only' })),
  },
  { title: 'NotifierCreated' },
);
export type NotifierCreated = Static<typeof NotifierCreated>;

export const SigningSecret = Type.Object(
  { signingSecret: Type.String({ description: 'the new signing secret, in this response only' }) },
  { title: 'SigningSecret' },
);

/** One delivery attempt (a test message has notificationId null). */
export const NotifierDelivery = Type.Object(
  {
    id: Id,
    at: DateTime,
    messageId: Type.String({ description: 'the webhook-id, the same on every attempt of one message' }),
    notificationId: Type.Union([Id, Type.Null()]),
    attempt: Type.Integer({ minimum: 1 }),
    ok: Type.Boolean(),
    statusCode: Type.Union([Type.Integer(), Type.Null()], { description: 'HTTP status or SMTP reply code' }),
    error: Type.Union([Type.String(), Type.Null()]),
    latencyMs: Type.Integer({ minimum: 0 }),
    note: Type.Union([Type.String(), Type.Null()], {
      description: 'what else happened, e.g. why the templates were not used (the default message was sent)',
    }),
  },
  { title: 'NotifierDelivery' },
);
export type NotifierDelivery = Static<typeof NotifierDelivery>;

export const NotifierTestResult = Type.Object(
  {
    ok: Type.Boolean(),
    statusCode: Type.Union([Type.Integer(), Type.Null()]),
    error: Type.Union([Type.String(), Type.Null()]),
    latencyMs: Type.Integer({ minimum: 0 }),
    retryable: Type.Boolean({ description: 'whether a real notification would be retried after this answer' }),
    messageId: Type.String(),
    note: Type.Union([Type.String(), Type.Null()], { description: 'as in the deliveries: why the templates were not used' }),
  },
  { title: 'NotifierTestResult' },
);
export type NotifierTestResult = Static<typeof NotifierTestResult>;

const SampleEvent = StringEnum(ALERT_EVENT_KINDS, {
  description: 'send (or render) a sample alert of this kind instead of the plain test message',
});

export const NotifierTest = Body({ event: Type.Optional(SampleEvent) }, 'NotifierTest');

/** `POST /{id}/preview`: templates to try (absent: the notifier's own). */
export const NotifierPreviewRequest = Body(
  { event: Type.Optional(SampleEvent), titleTemplate: Type.Optional(Template('title')), bodyTemplate: Type.Optional(Template('body')) },
  'NotifierPreviewRequest',
);
export const NotifierPreview = Type.Object(
  {
    title: Type.String(),
    body: Type.String({ description: "as the channel receives it, in the channel's format" }),
    templateError: Type.Union([Type.String(), Type.Null()], { description: 'why the default message was rendered instead' }),
  },
  { title: 'NotifierPreview' },
);
export type NotifierPreview = Static<typeof NotifierPreview>;
