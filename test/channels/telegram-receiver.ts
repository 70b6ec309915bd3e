import { json, type ProviderReceiver, type Reply, serve } from './provider-receiver.ts';

/**
 * A Telegram Bot API receiver (https://core.telegram.org/bots/api#sendmessage), parsing MarkdownV2
 * as https://core.telegram.org/bots/api#markdownv2-style says and answering in the shapes of
 * https://core.telegram.org/bots/api#making-requests.
 */
export interface TelegramMessage {
  chat_id: string | number;
  /** As sent, in MarkdownV2. */
  text: string;
  /** The text as Telegram shows it, after entities parsing. */
  shown: string;
  /** The bold parts, as shown. */
  bold: string[];
  link_preview_options?: { is_disabled?: boolean };
}

/** Characters MarkdownV2 reserves outside entities; `*` opens and closes bold, the only entity monctl sends. */
const RESERVED = new Set('_[]()~`>#+-=|{}.!'.split(''));

/** Telegram's parsing of MarkdownV2 text, for the bold entity: the text shown and the bold parts, or Telegram's error. */
export function parseMarkdownV2(text: string): { shown: string; bold: string[] } | { error: string } {
  let shown = '';
  const bold: string[] = [];
  let open: number | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') {
      const next = text.charCodeAt(i + 1);
      if (!(next >= 1 && next <= 126))
        return { error: `Bad Request: can't parse entities: Character '\\' is reserved and must be escaped with the preceding '\\'` };
      shown += text[++i];
    } else if (c === '*') {
      if (open === null) open = shown.length;
      else {
        bold.push(shown.slice(open));
        open = null;
      }
    } else if (RESERVED.has(c)) {
      return { error: `Bad Request: can't parse entities: Character '${c}' is reserved and must be escaped with the preceding '\\'` };
    } else shown += c;
  }
  if (open !== null) return { error: `Bad Request: can't parse entities: Can't find end of Bold entity at byte offset ${open}` };
  return { shown, bold };
}

const tgError = (error_code: number, description: string): Reply => ({ status: error_code, body: { ok: false, error_code, description } });

/** The Bot API: `POST /bot<token>/sendMessage`, JSON, the chat, MarkdownV2 parsed as Telegram does, at most 4096 characters shown. */
export function startTelegram(token: string, chatId: string): Promise<ProviderReceiver<TelegramMessage>> {
  return serve<TelegramMessage>((hit) => {
    if (hit.path !== `/bot${token}/sendMessage`)
      return {
        refused: `path ${hit.path}`,
        reply: tgError(hit.path.startsWith('/bot') ? 401 : 404, hit.path.startsWith('/bot') ? 'Unauthorized' : 'Not Found'),
      };
    if (hit.method !== 'POST') return { refused: `method ${hit.method}`, reply: tgError(400, 'Bad Request: method not allowed') };
    const m = json(hit);
    if (!m) return { refused: 'not JSON', reply: tgError(400, 'Bad Request: message text is empty') };
    if (String(m.chat_id) !== chatId) return { refused: `chat ${String(m.chat_id)}`, reply: tgError(400, 'Bad Request: chat not found') };
    if (m.parse_mode !== 'MarkdownV2')
      return { refused: `parse_mode ${String(m.parse_mode)}`, reply: tgError(400, 'Bad Request: unsupported parse_mode') };
    const preview = m.link_preview_options as { is_disabled?: unknown } | undefined;
    if (preview !== undefined && (typeof preview !== 'object' || typeof preview.is_disabled !== 'boolean'))
      return { refused: 'link_preview_options', reply: tgError(400, 'Bad Request: invalid link_preview_options') };
    if (typeof m.text !== 'string' || m.text === '') return { refused: 'text', reply: tgError(400, 'Bad Request: message text is empty') };
    const parsed = parseMarkdownV2(m.text);
    if ('error' in parsed) return { refused: parsed.error, reply: tgError(400, parsed.error) };
    if (parsed.shown.length > 4096) return { refused: 'too long', reply: tgError(400, 'Bad Request: message is too long') };
    return {
      payload: { ...(m as unknown as TelegramMessage), ...parsed },
      reply: {
        status: 200,
        body: { ok: true, result: { message_id: 1, date: 0, chat: { id: Number(chatId), type: 'private' }, text: parsed.shown } },
      },
    };
  });
}
