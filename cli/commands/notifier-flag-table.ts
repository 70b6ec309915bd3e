import { NOTIFIER_FIELDS, NOTIFIER_TYPES, type NotifierType } from '../../src/notifier-fields.ts';

/**
 * One table for the flags of the channel types (`notifiers add|update`): which
 * flag sets which config field, how its value is read, and what each secret
 * is called at the prompt. Which types take a field comes from NOTIFIER_FIELDS,
 * so a flag given to a type that does not take it is refused before any
 * request, and the help lists the types next to each flag.
 */
export interface FieldFlag {
  /** The config field. */
  field: string;
  /** commander's spelling, `--chat-id <id>`. */
  flag: string;
  /** The commander option key, `chatId`. */
  key: string;
  help: string;
  /** Reads the value: undefined when it is not one (then the usage error says `expect`). */
  parse?: (text: string) => unknown;
  expect?: string;
}

/** A whole number within bounds, or undefined. */
const intIn = (text: string, min: number, max: number) =>
  /^-?\d+$/.test(text) && Number(text) >= min && Number(text) <= max ? Number(text) : undefined;

/** Value parsers, each returning undefined for a bad value (the caller names the flag). */
export const parseSeconds = (text: string) => intIn(text, 30, 10800);
const upper = (text: string) => text.toUpperCase();

/** The plain (not secret) fields of the channel types; the four older types keep their own flags in notifier-input.ts. */
export const FIELD_FLAGS: FieldFlag[] = [
  { field: 'chatId', flag: '--chat-id <chat>', key: 'chatId', help: 'the chat: a number (-100… for a channel) or @channelname' },
  {
    field: 'apiUrl',
    flag: '--api-url <url>',
    key: 'apiUrl',
    help: "replaces the provider's API host (a proxy, a regional or self-hosted endpoint)",
  },
  { field: 'region', flag: '--region <region>', key: 'region', help: 'US (api.opsgenie.com, default) or EU', parse: upper },
  {
    field: 'retrySeconds',
    flag: '--retry-seconds <s>',
    key: 'retrySeconds',
    help: 'priority 2: repeat every this many seconds until acknowledged (30 to 10800, default 60)',
    parse: parseSeconds,
    expect: 'a number of seconds from 30 to 10800',
  },
  {
    field: 'expireSeconds',
    flag: '--expire-seconds <s>',
    key: 'expireSeconds',
    help: 'priority 2: stop repeating after this many seconds (30 to 10800, default 3600)',
    parse: parseSeconds,
    expect: 'a number of seconds from 30 to 10800',
  },
  { field: 'homeserver', flag: '--homeserver <url>', key: 'homeserver', help: 'the homeserver, e.g. https://matrix.example.org' },
  { field: 'roomId', flag: '--room-id <room>', key: 'roomId', help: 'the room: !id:server or #alias:server' },
];

/** What each secret is called at the prompt and in errors, per type. */
export const SECRET_LABELS: Record<string, Partial<Record<NotifierType, string>>> = {
  url: {
    SLACK: 'Slack incoming-webhook URL',
    DISCORD: 'Discord webhook URL',
    TEAMS: 'Teams Workflows webhook URL',
    GOOGLE_CHAT: 'Google Chat space webhook URL',
  },
  token: {
    NTFY: 'ntfy access token',
    TELEGRAM: 'Telegram bot token',
    PUSHOVER: 'Pushover application token',
    GOTIFY: 'Gotify application token',
    MATRIX: 'Matrix access token',
  },
  routingKey: { PAGERDUTY: 'PagerDuty routing key' },
  apiKey: { OPSGENIE: 'Opsgenie API key' },
  userKey: { PUSHOVER: 'Pushover user key' },
  password: { EMAIL: 'SMTP password' },
};

/** `--with-routing-key`: update's flag that reads a new value of a secret field. */
export const withFlag = (field: string) => `--with-${field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
/** The commander key of withFlag(field): `withRoutingKey`. */
export const withKey = (field: string) => `with${field[0].toUpperCase()}${field.slice(1)}`;

/** The types that take a config field: `TELEGRAM, PAGERDUTY`. */
export const typesTaking = (field: string): NotifierType[] => NOTIFIER_TYPES.filter((t) => NOTIFIER_FIELDS[t].fields.includes(field));

/** The secrets `--with-…` flags read (headers, a webhook signing secret and the SMTP password have flags of their own). */
export const WITH_SECRETS = ['url', 'token', 'routingKey', 'apiKey', 'userKey'] as const;
