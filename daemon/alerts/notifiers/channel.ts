import type { OutgoingMessage, SendOutcome } from '../types.ts';
import type { FlatConfig, LoadedNotifier, StoredConfig, StoredSecrets } from './config-types.ts';
import type { PostOptions } from './http-post.ts';
import type { RenderedMessage } from './render.ts';

/**
 * A notification channel type of its own module (channels/): how its config is checked, how text
 * is escaped for it, and how a message is delivered. The four first types (WEBHOOK, SLACK,
 * NTFY, EMAIL) predate it and are wired directly in validate.ts and senders.ts.
 */
export interface Channel {
  /**
   * Plain text made safe for where the channel puts the title and body (Telegram MarkdownV2,
   * Matrix HTML, Discord markdown…): the default message goes through it, and so does every
   * variable a template prints, while the template's own text is the channel's markup.
   */
  escape(text: string): string;
  /**
   * The type's own checks, after validate.ts has refused unknown and missing fields and copied
   * every field of NOTIFIER_FIELDS into `out` (secrets into `out.secrets`, the others into
   * `out.config`). Normalise in place (trim a trailing slash, fill a default), and report each
   * problem with `err(field, message)`; `field` is the config field, without `config.`.
   */
  check(flat: FlatConfig, out: { config: StoredConfig; secrets: StoredSecrets }, err: (field: string, message: string) => void): void;
  /**
   * Delivers one message. `rendered.markup` true: title and text are a template's output, already
   * in the channel's format (do not escape them again); false: plain text, to escape. Never throws:
   * every failure is a SendOutcome (use postJson); a 429 or Retry-After sets `retryAfterMs`.
   */
  send(n: LoadedNotifier, message: OutgoingMessage, rendered: RenderedMessage, io: PostOptions): Promise<SendOutcome>;
}
