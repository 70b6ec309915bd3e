import type { AlertItem, OutgoingMessage } from '../types.ts';
import {
  type Category,
  CATEGORY_ORDER,
  categoryOf,
  causeText,
  dependentsText,
  durationOf,
  GOOD_NEWS,
  humanDuration,
  LABELS,
  messageLink,
  nameList,
  when,
} from './render-parts.ts';

/**
 * The one rendering of an outgoing message that every notifier type uses: a
 * title (email subject, ntfy title) and a plain text that carries the whole
 * message on its own (Mattermost and Rocket.Chat read only Slack's `text`).
 * It names the resource or agent, the target, the cause, how long, whether it
 * is a reminder, and links to the daemon when `--public-url` is set.
 */
export const MAX_NAMED = 20;

export interface RenderOptions {
  publicUrl?: string | null;
  /** Epoch ms; durations of open incidents run to it. */
  now?: number;
  /** Named in a test message. */
  notifierName?: string;
}

export interface RenderedMessage {
  title: string;
  text: string;
  link: string | null;
  /** problem: something needs attention; recovery: only good news; test: a test message. */
  tone: 'problem' | 'recovery' | 'test';
  /**
   * true: `title` and `text` are a template's output, already in the channel's format (variables
   * escaped by the channel's `escape`): send them as they are. Absent: plain text, to escape.
   */
  markup?: boolean;
  /** Items per category (down, agentDown, certExpiring, recovered, agentUp). */
  summary: Record<Category, number>;
}

export function renderMessage(message: OutgoingMessage, opts: RenderOptions = {}): RenderedMessage {
  const now = opts.now ?? Date.now();
  const publicUrl = opts.publicUrl ?? null;
  const link = messageLink(message.items, publicUrl);
  const summary = Object.fromEntries(CATEGORY_ORDER.map((c) => [c, 0])) as Record<Category, number>;
  for (const item of message.items) summary[categoryOf(item)]++;
  if (message.items.length === 0) return { ...testMessage(message, opts, now, link), link, summary };
  if (message.test) {
    // A sample alert (a test with an event): rendered as the real one would be, and marked.
    const real = renderMessage({ ...message, test: false }, opts);
    return { ...real, title: `Test: ${real.title}`, text: `${real.text}\n\n(A sample alert sent as a test: nothing happened.)` };
  }

  const tone = message.items.every((i) => GOOD_NEWS.has(categoryOf(i))) ? 'recovery' : 'problem';
  if (message.items.length === 1) {
    const [item] = message.items;
    return { title: singleTitle(item, now), text: joinLines([...singleLines(item, now), link && `Details: ${link}`]), link, tone, summary };
  }
  const present = CATEGORY_ORDER.filter((c) => summary[c] > 0);
  const reminders = message.items.every((i) => i.reminder);
  const title = `${reminders ? 'Reminder: ' : ''}${
    present.length === 1
      ? `${message.items.length} ${LABELS[present[0]].many}`
      : present.map((c) => `${summary[c]} ${LABELS[c].short[summary[c] === 1 ? 0 : 1]}`).join(', ')
  }`;

  // At most MAX_NAMED names in the whole message, bad news first; the rest are counted.
  let budget = MAX_NAMED;
  const heads: string[] = [];
  const sections: string[] = [];
  for (const category of present) {
    const items = message.items.filter((i) => categoryOf(i) === category);
    const shown = items.slice(0, budget);
    budget -= shown.length;
    const noun = `${items.length} ${LABELS[category][items.length === 1 ? 'one' : 'many']}`;
    heads.push(
      shown.length
        ? `${noun}: ${nameList(
            items.map((i) => i.subject.name),
            shown.length,
          )}`
        : noun,
    );
    sections.push(`${LABELS[category].section}:`, ...shown.map((i) => `- ${itemLine(i, now)}`));
    if (items.length > shown.length) sections.push(`- … and ${items.length - shown.length} more`);
  }
  return { title, text: joinLines([...heads, '', ...sections, ...(link ? ['', `Details: ${link}`] : [])]), link, tone, summary };
}

function testMessage(message: OutgoingMessage, opts: RenderOptions, now: number, link: string | null) {
  const who = opts.notifierName ? ` through notifier "${opts.notifierName}"` : '';
  return {
    title: 'monctl test notification',
    text: joinLines([
      `This is a test message from monctl${who}. If you can read it, alerts will reach you here.`,
      `Sent at ${when(now)} (message ${message.id}).`,
      link && `Daemon: ${link}`,
    ]),
    tone: 'test' as const,
  };
}

function singleTitle(item: AlertItem, now: number): string {
  const name = item.subject.name;
  switch (categoryOf(item)) {
    case 'down':
      return `${item.reminder ? 'Still DOWN' : 'DOWN'}: ${name}`;
    case 'agentDown':
      return `${item.reminder ? 'Agent still DOWN' : 'Agent DOWN'}: ${name}`;
    case 'recovered':
      return `UP: ${name}`;
    case 'agentUp':
      return `Agent UP: ${name}`;
    case 'certExpiring':
      return `Certificate ${certLeft(item, now)}: ${name}`;
    case 'certRenewalFailed':
      return `Certificate renewal failed: ${name}`;
  }
}

/** The lines of a message about one item. */
function singleLines(item: AlertItem, now: number): Array<string | null> {
  const name = item.subject.name;
  const lasted = durationOf(item, now);
  const cause = causeText(item);
  const target = item.subject.target && `${item.subject.type === 'agent' ? 'Address' : 'Target'}: ${item.subject.target}`;
  const noun = item.subject.type === 'agent' ? `Agent ${name}` : name;
  switch (categoryOf(item)) {
    case 'down':
    case 'agentDown': {
      const state = item.subject.type === 'agent' ? 'DISCONNECTED' : 'DOWN';
      return [
        item.reminder ? `${noun} is still ${state} (reminder).` : `${noun} is ${state}.`,
        target,
        cause && `Cause: ${cause}`,
        item.openedAt !== null ? `Since: ${when(item.openedAt)}${lasted !== null ? ` (${humanDuration(lasted)})` : ''}` : null,
        dependentsText(item) && `…${dependentsText(item)}: their alerts are held back.`,
      ];
    }
    case 'recovered':
    case 'agentUp': {
      const state = item.subject.type === 'agent' ? 'CONNECTED' : 'UP';
      return [
        `${noun} is ${state} again${lasted !== null ? ` after ${humanDuration(lasted)}` : ''}.`,
        target,
        cause && `Cause was: ${cause}`,
        item.openedAt !== null && item.resolvedAt !== null ? `Down from ${when(item.openedAt)} to ${when(item.resolvedAt)}.` : null,
      ];
    }
    case 'certExpiring':
      return [
        `The TLS certificate of ${name} ${certLeft(item, now)}.`,
        target,
        item.cert ? `Not valid after: ${when(item.cert.notAfter)} (alert threshold: ${item.cert.thresholdDays} days)` : null,
      ];
    case 'certRenewalFailed':
      return [
        `The ACME order for ${name} on the HTTPS edge failed; it is retried with backoff.`,
        cause && `Cause: ${cause}`,
        item.cert
          ? `The certificate served now ${certLeft(item, now)} (${when(item.cert.notAfter)}).`
          : 'No certificate is served for it yet.',
      ];
  }
}

/** One line of a grouped message: `web (https://…): Connection refused (ECONNREFUSED), down for 3 min`. */
function itemLine(item: AlertItem, now: number): string {
  const lasted = durationOf(item, now);
  const parts: string[] = [];
  const cause = causeText(item);
  const category = categoryOf(item);
  if (category === 'certExpiring') parts.push(certLeft(item, now));
  else if (category === 'certRenewalFailed') parts.push(cause ?? 'order failed');
  else if (GOOD_NEWS.has(category)) parts.push(lasted !== null ? `back after ${humanDuration(lasted)}` : 'back');
  else {
    if (cause) parts.push(cause);
    if (lasted !== null) parts.push(`${item.reminder ? 'still down' : 'down'} for ${humanDuration(lasted)}`);
    const dependents = dependentsText(item);
    if (dependents) parts.push(dependents);
  }
  if (item.reminder && !parts.some((p) => p.startsWith('still'))) parts.push('reminder');
  const target = item.subject.target ? ` (${item.subject.target})` : '';
  return `${item.subject.name}${target}${parts.length ? `: ${parts.join(', ')}` : ''}`;
}

function certLeft(item: AlertItem, now: number): string {
  if (!item.cert) return 'expires soon';
  const left = item.cert.notAfter - now;
  const days = Math.floor(left / 86_400_000);
  if (left <= 0) return 'has expired';
  return days >= 2 ? `expires in ${days} days` : `expires in ${humanDuration(left)}`;
}

function joinLines(lines: Array<string | null | false | undefined>): string {
  return lines
    .filter((l): l is string => typeof l === 'string')
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
