import type { NotifierType } from '../../../src/api/schemas/notifiers.ts';

/** What `notifiers.config` holds (JSON): everything but the secrets. */
export interface StoredConfig {
  url?: string;
  /** SLACK, DISCORD, TEAMS, GOOGLE_CHAT: scheme and host of the secret URL, to show where it goes. */
  origin?: string;
  topic?: string;
  /** NTFY: 1 (min) to 5 (max); PUSHOVER: -2 to 2; GOTIFY: 0 to 10. */
  priority?: number;
  /** TELEGRAM: the chat id or @channel. */
  chatId?: string;
  /** TELEGRAM, PAGERDUTY, OPSGENIE, PUSHOVER: replaces the provider's API host. */
  apiUrl?: string;
  /** OPSGENIE: US or EU. */
  region?: 'US' | 'EU';
  /** PUSHOVER emergency priority (2): repeat and expiry. */
  retrySeconds?: number;
  expireSeconds?: number;
  /** MATRIX: the homeserver and the room (id or alias). */
  homeserver?: string;
  roomId?: string;
  host?: string;
  port?: number;
  security?: 'STARTTLS' | 'TLS' | 'NONE';
  username?: string;
  from?: string;
  to?: string[];
  skipTlsVerify?: boolean;
  tlsCa?: string;
}

/** What `notifiers.secrets_enc` seals (JSON): never returned by the API. */
export interface StoredSecrets {
  /** SLACK, DISCORD, TEAMS, GOOGLE_CHAT: the webhook URL, which carries its token. */
  url?: string;
  /** WEBHOOK: `whsec_…`. */
  signingSecret?: string;
  /** WEBHOOK: extra headers, name to value. */
  headers?: Record<string, string>;
  /** NTFY: Bearer token; TELEGRAM: bot token; PUSHOVER, GOTIFY: application token; MATRIX: access token. */
  token?: string;
  /** PAGERDUTY: the Events API v2 routing key. */
  routingKey?: string;
  /** OPSGENIE: the API integration key. */
  apiKey?: string;
  /** PUSHOVER: the user or group key. */
  userKey?: string;
  /** EMAIL: SMTP AUTH password. */
  password?: string;
}

/** A config as the API takes it: config and secrets in one object, a priority maybe by name. */
export type FlatConfig = StoredConfig & StoredSecrets & { priority?: number | string };

/** A notifier as the senders use it: secrets opened. */
export interface LoadedNotifier {
  id: number;
  name: string;
  type: NotifierType;
  enabled: boolean;
  config: StoredConfig;
  secrets: StoredSecrets;
  /** Liquid templates; null: the default message. */
  titleTemplate: string | null;
  bodyTemplate: string | null;
}
