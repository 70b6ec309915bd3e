import { fitTokens } from './fit.ts';
import type { SendOutcome } from '../../types.ts';
import type { Channel } from '../channel.ts';
import { postJson } from '../http-post.ts';
import { answerOf, baseUrl } from './api-base.ts';

/**
 * TELEGRAM: the Bot API's `sendMessage` (https://core.telegram.org/bots/api#sendmessage) in
 * MarkdownV2, the title in bold and the text after it, without a link preview. The bot token
 * is part of the URL path, so it is cut out of every error before the outcome is recorded or
 * logged. An `{ok: false, parameters: {retry_after}}` answer (sent on a 429, with or without a
 * Retry-After header) is the wait the dispatcher honours.
 */
const API = 'https://api.telegram.org';
/** Telegram's limit on a message, in characters after entities parsing (an escape is one character). */
export const MAX_TEXT = 4096;
/** A title longer than this is cut before it is made bold, so that cutting the message never opens an entity it cannot close. */
const MAX_TITLE = 256;

/** Every character MarkdownV2 reads as markup outside code (https://core.telegram.org/bots/api#markdownv2-style), and the backslash. */
const SPECIAL = /[_*[\]()~`>#+\-=|{}.!\\]/g;
export const escapeMarkdownV2 = (text: string): string => text.replace(SPECIAL, '\\$&');

/**
 * `text` cut to `max` characters as Telegram counts them after parsing, with `…` at the end when
 * cut: an escape (`\.`) counts as the one character it shows and is never split, nor is a
 * surrogate pair. Markup characters count as shown, which errs on the short side.
 */
export function fitMarkdownV2(text: string, max = MAX_TEXT): string {
  const tokens = text.match(/\\[\s\S]|[\s\S]/gu) ?? [];
  return fitTokens(text, tokens, (t) => (t.length > 1 && t[0] === '\\' ? t.length - 1 : t.length), max);
}

interface TelegramAnswer {
  ok: boolean;
  error_code: number;
  description: string;
  parameters: { retry_after?: number; migrate_to_chat_id?: number };
}

/** Reads `{ok: false, error_code, description, parameters}` into the outcome; a success or a proxy's own answer is left as is. */
function inspect(status: number, text: string, o: SendOutcome): SendOutcome {
  const answer = answerOf<TelegramAnswer>(text);
  if (answer?.ok !== false) return o;
  const retryAfter = answer.parameters?.retry_after;
  const moved = answer.parameters?.migrate_to_chat_id;
  const description = typeof answer.description === 'string' ? answer.description.slice(0, 300) : 'no description';
  const wait = typeof retryAfter === 'number' && retryAfter >= 0 ? retryAfter * 1000 : undefined;
  return {
    ...o,
    ok: false,
    statusCode: status,
    error: `Telegram ${answer.error_code ?? status}: ${description}${moved !== undefined ? ` (the group is now chat ${moved}: set chatId to it)` : ''}`,
    retryable: wait !== undefined || o.retryable,
    ...(wait !== undefined ? { retryAfterMs: Math.max(wait, o.retryAfterMs ?? 0) } : {}),
  };
}

/** The outcome with the token cut out of its error (undici's errors and a proxy's pages can quote the URL). */
function redacted(o: SendOutcome, token: string): SendOutcome {
  if (!o.error || !token) return o;
  const error = o.error.split(token).join('<token>').split(encodeURIComponent(token)).join('<token>');
  return { ...o, error };
}

export const telegram: Channel = {
  escape: escapeMarkdownV2,
  check(flat, out, err) {
    if (!/^\d{1,20}:[A-Za-z0-9_-]{1,200}$/.test(flat.token ?? '')) {
      err('token', 'must be a bot token as @BotFather gives it: digits, a colon, then letters, digits, _ and - (123456:ABC-DEF1234ghIkl…)');
    }
    const chatId = String(flat.chatId ?? '').trim();
    if (!/^-?\d{1,20}$/.test(chatId) && !/^@[A-Za-z][A-Za-z0-9_]{4,31}$/.test(chatId)) {
      err('chatId', 'must be a chat id (an integer, negative for groups and channels: -100…) or a public @channelname');
    }
    out.config.chatId = chatId;
    if (flat.apiUrl !== undefined) out.config.apiUrl = baseUrl(flat.apiUrl, 'apiUrl', err);
  },
  async send(n, _message, rendered, io) {
    const token = n.secrets.token ?? '';
    const title = rendered.markup ? rendered.title : escapeMarkdownV2([...rendered.title].slice(0, MAX_TITLE).join(''));
    const text = rendered.markup ? rendered.text : escapeMarkdownV2(rendered.text);
    const body = JSON.stringify({
      chat_id: n.config.chatId,
      text: fitMarkdownV2(text ? `*${title}*\n${text}` : `*${title}*`),
      parse_mode: 'MarkdownV2',
      link_preview_options: { is_disabled: true },
    });
    const outcome = await postJson(`${n.config.apiUrl ?? API}/bot${token}/sendMessage`, body, {}, io, { inspect });
    return redacted(outcome, token);
  },
};
