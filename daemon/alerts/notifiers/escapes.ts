import type { NotifierType } from '../../../src/notifier-fields.ts';
import { CHANNELS } from './channels/index.ts';
import { escapeMrkdwn } from './slack.ts';

/**
 * How plain text is made safe for where a notifier type puts it: the channel modules' own
 * `escape`, and for the four first types Slack's `& < >` (its mrkdwn reads them as markup) or
 * nothing (WEBHOOK's JSON strings are escaped by JSON itself, ntfy and email are plain text).
 */
const FIRST_TYPES: Partial<Record<NotifierType, (text: string) => string>> = {
  SLACK: escapeMrkdwn,
};

const plain = (text: string) => text;

export function escapeFor(type: NotifierType): (text: string) => string {
  return CHANNELS[type]?.escape ?? FIRST_TYPES[type] ?? plain;
}
