import type { SendOutcome } from '../../types.ts';
import type { Channel } from '../channel.ts';
import type { LoadedNotifier } from '../config-types.ts';
import { postJson } from '../http-post.ts';
import type { RenderedMessage } from '../render.ts';
import { backslashEscape, escapeOutsideUrls, parseJson, providerError, truncate, webhookUrlProblem, withoutLinkLine } from './chat-text.ts';

/**
 * DISCORD: Execute Webhook (https://discord.com/developers/docs/resources/webhook#execute-webhook)
 * with one embed coloured by the message's tone. `?wait=true` makes Discord answer with the
 * message or an error instead of an empty 204 before it has checked the payload, and
 * `allowed_mentions.parse: []` makes a resource named `@everyone` text, never a ping.
 */
const COLOURS = { problem: 0xd83c3e, recovery: 0x2eb67d, test: 0x5865f2 } as const;
/** Discord's embed limits (title, description, field value). */
const MAX_TITLE = 256;
const MAX_DESCRIPTION = 4096;
const MAX_FIELD = 1024;

/** Every character Discord's markdown reads (simple-markdown escapes any punctuation after a backslash). */
const escapeMarkdown = (text: string) => backslashEscape(text, /[\\*_~`|<>[\]()@]/g);

export function discordBody(rendered: RenderedMessage): string {
  const esc = (s: string) => (rendered.markup ? s : escapeOutsideUrls(s, escapeMarkdown));
  const link = rendered.link;
  const embed = {
    title: truncate(esc(rendered.title), MAX_TITLE),
    description: truncate(esc(rendered.markup ? rendered.text : withoutLinkLine(rendered.text, link)), MAX_DESCRIPTION),
    color: COLOURS[rendered.tone],
    timestamp: new Date().toISOString(),
    ...(link ? { url: link, fields: [{ name: 'Details', value: truncate(link, MAX_FIELD) }] } : {}),
    footer: { text: 'monctl' },
  };
  return JSON.stringify({ username: 'monctl', embeds: [embed], allowed_mentions: { parse: [] } });
}

/** The URL with `wait=true`, its other parameters (`thread_id`) kept. */
export function discordUrl(url: string): string {
  const u = new URL(url);
  u.searchParams.set('wait', 'true');
  return u.toString();
}

/** A 429's JSON `retry_after` (seconds, fractional) when no `Retry-After` header gave the wait. */
function inspect(status: number, text: string, outcome: SendOutcome): SendOutcome {
  const out = providerError(status, text, outcome);
  if (status !== 429 || out.retryAfterMs !== undefined) return out;
  const seconds = parseJson(text)?.retry_after;
  return typeof seconds === 'number' && Number.isFinite(seconds) && seconds >= 0
    ? { ...out, retryAfterMs: Math.ceil(seconds * 1000) }
    : out;
}

export const discord: Channel = {
  escape: (text) => escapeOutsideUrls(text, escapeMarkdown),
  check(flat, _out, err) {
    const problem = webhookUrlProblem(flat.url!);
    if (problem) err('url', problem);
  },
  send: (n: LoadedNotifier, _message, rendered, io) => postJson(discordUrl(n.secrets.url!), discordBody(rendered), {}, io, { inspect }),
};
