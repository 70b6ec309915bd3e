import type { NotifierType } from '../../../src/api/schemas/notifiers.ts';

/** What `notifiers.config` holds (JSON): everything but the secrets. */
export interface StoredConfig {
  url?: string;
  /** SLACK: scheme and host of the secret URL, to show where it goes. */
  origin?: string;
  topic?: string;
  /** NTFY: 1 (min) to 5 (max). */
  priority?: number;
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
  /** SLACK: the incoming-webhook URL, which carries its token. */
  url?: string;
  /** WEBHOOK: `whsec_…`. */
  signingSecret?: string;
  /** WEBHOOK: extra headers, name to value. */
  headers?: Record<string, string>;
  /** NTFY: Bearer token. */
  token?: string;
  /** EMAIL: SMTP AUTH password. */
  password?: string;
}

/** A notifier as the senders use it: secrets opened. */
export interface LoadedNotifier {
  id: number;
  name: string;
  type: NotifierType;
  enabled: boolean;
  config: StoredConfig;
  secrets: StoredSecrets;
}
