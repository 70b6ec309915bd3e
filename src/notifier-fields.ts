/**
 * The notifier types and the config fields each takes, without TypeBox: the
 * API schemas, the daemon's checks and the CLI (`notifiers`, `apply`) share it.
 */
export const NOTIFIER_TYPES = [
  'WEBHOOK',
  'SLACK',
  'NTFY',
  'EMAIL',
  'DISCORD',
  'TELEGRAM',
  'TEAMS',
  'PAGERDUTY',
  'OPSGENIE',
  'PUSHOVER',
  'GOTIFY',
  'MATRIX',
  'GOOGLE_CHAT',
] as const;
export type NotifierType = (typeof NOTIFIER_TYPES)[number];
export const EMAIL_SECURITIES = ['STARTTLS', 'TLS', 'NONE'] as const;
export type EmailSecurity = (typeof EMAIL_SECURITIES)[number];
export const NTFY_PRIORITIES = ['min', 'low', 'default', 'high', 'max'] as const;
export const OPSGENIE_REGIONS = ['US', 'EU'] as const;
/** How much a resource's failure matters (docs/API.md#severity): rules match on it, pagers receive it. */
export const SEVERITIES = ['critical', 'warning', 'info'] as const;
export type Severity = (typeof SEVERITIES)[number];
/** The SMTP port of each security when none is given. */
export const DEFAULT_PORTS: Record<EmailSecurity, number> = { STARTTLS: 587, TLS: 465, NONE: 25 };

/** The config fields each type takes, and which of them are secrets (sealed, never returned). */
export const NOTIFIER_FIELDS: Record<NotifierType, { fields: readonly string[]; required: readonly string[]; secrets: readonly string[] }> =
  {
    WEBHOOK: { fields: ['url', 'headers', 'signingSecret'], required: ['url'], secrets: ['signingSecret', 'headers'] },
    SLACK: { fields: ['url'], required: ['url'], secrets: ['url'] },
    NTFY: { fields: ['url', 'topic', 'priority', 'token'], required: ['url', 'topic'], secrets: ['token'] },
    EMAIL: {
      fields: ['host', 'port', 'security', 'username', 'password', 'from', 'to', 'skipTlsVerify', 'tlsCa'],
      required: ['host', 'from', 'to'],
      secrets: ['password'],
    },
    DISCORD: { fields: ['url'], required: ['url'], secrets: ['url'] },
    TELEGRAM: { fields: ['token', 'chatId', 'apiUrl'], required: ['token', 'chatId'], secrets: ['token'] },
    TEAMS: { fields: ['url'], required: ['url'], secrets: ['url'] },
    PAGERDUTY: { fields: ['routingKey', 'apiUrl'], required: ['routingKey'], secrets: ['routingKey'] },
    OPSGENIE: { fields: ['apiKey', 'region', 'apiUrl'], required: ['apiKey'], secrets: ['apiKey'] },
    PUSHOVER: {
      fields: ['userKey', 'token', 'priority', 'retrySeconds', 'expireSeconds', 'apiUrl'],
      required: ['userKey', 'token'],
      secrets: ['userKey', 'token'],
    },
    GOTIFY: { fields: ['url', 'token', 'priority'], required: ['url', 'token'], secrets: ['token'] },
    MATRIX: { fields: ['homeserver', 'token', 'roomId'], required: ['homeserver', 'token', 'roomId'], secrets: ['token'] },
    GOOGLE_CHAT: { fields: ['url'], required: ['url'], secrets: ['url'] },
  };

/**
 * The config fields naming where a type's secrets are sent (besides `url`): when one changes in a
 * PATCH, the stored secrets must be given again (a stored secret is never sent somewhere new).
 * The default API host of a type counts as its destination when `apiUrl` is absent.
 */
export const DESTINATION_FIELDS: Partial<Record<NotifierType, readonly string[]>> = {
  TELEGRAM: ['apiUrl'],
  PAGERDUTY: ['apiUrl'],
  OPSGENIE: ['region', 'apiUrl'],
  PUSHOVER: ['apiUrl'],
  GOTIFY: ['url'],
  MATRIX: ['homeserver'],
};

/** An ntfy priority, 1 to 5 or its name (`high`), as 1 to 5; undefined when neither. */
export function priorityOf(value: number | string): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 1 && value <= 5 ? value : undefined;
  const named = NTFY_PRIORITIES.indexOf(value.toLowerCase() as (typeof NTFY_PRIORITIES)[number]);
  if (named >= 0) return named + 1;
  return /^[1-5]$/.test(value) ? Number(value) : undefined;
}
