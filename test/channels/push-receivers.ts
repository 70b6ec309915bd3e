import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Loopback receivers for the push channels, each written from its provider's public API
 * documentation and as strict as it is:
 * - Telegram Bot API, sendMessage and MarkdownV2: https://core.telegram.org/bots/api#sendmessage,
 *   https://core.telegram.org/bots/api#markdownv2-style, answers https://core.telegram.org/bots/api#making-requests
 * - Pushover: https://pushover.net/api (messages, priority, HTML, limits, errors)
 * - Gotify: https://gotify.net/api-docs (POST /message, X-Gotify-Key) and
 *   https://gotify.net/docs/msgextras (client::display, client::notification)
 * A test can queue answers of the provider's own shapes ahead of the checked success.
 */
export interface Hit {
  at: number;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}
export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}
export interface ProviderReceiver<T> {
  url: string;
  hits: Hit[];
  /** Payloads that passed every check, in order. */
  accepted: T[];
  /** Why requests were refused by the checks (400s the sender did not mean to provoke). */
  refused: string[];
  queue(...replies: Reply[]): void;
  close(): Promise<void>;
}

async function serve<T>(
  check: (hit: Hit) => { payload: T; reply: Reply } | { refused: string; reply: Reply },
): Promise<ProviderReceiver<T>> {
  const hits: Hit[] = [];
  const accepted: T[] = [];
  const refused: string[] = [];
  const queued: Reply[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const hit = {
        at: Date.now(),
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      };
      hits.push(hit);
      let reply = queued.shift();
      if (!reply) {
        const result = check(hit);
        if ('payload' in result) accepted.push(result.payload);
        else refused.push(result.refused);
        reply = result.reply;
      }
      res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers }).end(JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    accepted,
    refused,
    queue: (...replies) => queued.push(...replies),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const json = (hit: Hit): Record<string, unknown> | undefined => {
  if (!/^application\/json/.test(String(hit.headers['content-type']))) return undefined;
  try {
    return JSON.parse(hit.body) as Record<string, unknown>;
  } catch {
    return undefined;
  }
};

// ---------------------------------------------------------------- Telegram

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

// ---------------------------------------------------------------- Pushover

export interface PushoverMessage {
  token: string;
  user: string;
  title?: string;
  message: string;
  html?: number;
  priority?: number;
  url?: string;
  url_title?: string;
  retry?: number;
  expire?: number;
}

const poError = (status: number, field: string, error: string): Reply => ({
  status,
  body: { [field]: 'invalid', errors: [error], status: 0, request: 'e5c6b7a8-0000-4000-8000-000000000000' },
});
const chars = (v: unknown) => (typeof v === 'string' ? [...v].length : -1);

/** `POST /1/messages.json` (JSON or form): the app token and user key, the limits, priority 2's retry and expire, HTML's tags. */
export function startPushover(token: string, user: string): Promise<ProviderReceiver<PushoverMessage>> {
  return serve<PushoverMessage>((hit) => {
    if (hit.method !== 'POST' || hit.path !== '/1/messages.json')
      return { refused: `${hit.method} ${hit.path}`, reply: { status: 404, body: { status: 0, errors: ['not found'] } } };
    const m = (json(hit) ?? Object.fromEntries(new URLSearchParams(hit.body))) as Record<string, unknown>;
    const num = (v: unknown) => (typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v);
    if (m.token !== token)
      return { refused: 'token', reply: poError(400, 'token', 'application token is invalid, see https://pushover.net/api') };
    if (m.user !== user)
      return {
        refused: 'user',
        reply: poError(
          400,
          'user',
          'user identifier is not a valid user, group, or subscribed user key, see https://pushover.net/api#identifiers',
        ),
      };
    if (chars(m.message) < 1) return { refused: 'message', reply: poError(400, 'message', 'message cannot be blank') };
    if (chars(m.message) > 1024)
      return { refused: 'message length', reply: poError(400, 'message', 'message is too long (1024 characters maximum)') };
    if (m.title !== undefined && chars(m.title) > 250)
      return { refused: 'title', reply: poError(400, 'title', 'title is too long (250 characters maximum)') };
    const priority = num(m.priority ?? 0);
    if (!Number.isInteger(priority) || (priority as number) < -2 || (priority as number) > 2)
      return { refused: 'priority', reply: poError(400, 'priority', 'priority is invalid') };
    if (priority === 2) {
      const retry = num(m.retry);
      const expire = num(m.expire);
      if (!Number.isInteger(retry) || (retry as number) < 30)
        return { refused: 'retry', reply: poError(400, 'retry', 'retry must be supplied with emergency priority and be at least 30') };
      if (!Number.isInteger(expire) || (expire as number) > 10800)
        return { refused: 'expire', reply: poError(400, 'expire', 'expire must be supplied with emergency priority and be at most 10800') };
    }
    if (m.html !== undefined && num(m.html) !== 1) return { refused: 'html', reply: poError(400, 'html', 'html must be 1') };
    // With html=1 only these tags are read; anything else between < and > would be lost.
    if (num(m.html) === 1 && /<(?!\/?(?:b|i|u|a|font)\b)[^>]*>/i.test(String(m.message)))
      return { refused: 'tag', reply: poError(400, 'message', 'message contains an unsupported tag') };
    if (m.url !== undefined && chars(m.url) > 512)
      return { refused: 'url', reply: poError(400, 'url', 'url is too long (512 characters maximum)') };
    if (m.url_title !== undefined && chars(m.url_title) > 100)
      return { refused: 'url_title', reply: poError(400, 'url_title', 'url_title is too long (100 characters maximum)') };
    return {
      payload: { ...(m as unknown as PushoverMessage), priority: priority as number },
      reply: {
        status: 200,
        body: { status: 1, request: 'a1b2c3d4-0000-4000-8000-000000000000', ...(priority === 2 ? { receipt: 'r'.repeat(30) } : {}) },
      },
    };
  });
}

// ---------------------------------------------------------------- Gotify

export interface GotifyMessage {
  title?: string;
  message: string;
  priority?: number;
  extras?: { 'client::display'?: { contentType?: string }; 'client::notification'?: { click?: { url?: string } } };
}

const goError = (status: number, error: string, errorDescription: string): Reply => ({
  status,
  body: { error, errorCode: status, errorDescription },
});

/** `POST /message` with the app token in X-Gotify-Key (never in the query), a message, a priority and the display extras. */
export function startGotify(token: string): Promise<ProviderReceiver<GotifyMessage>> {
  return serve<GotifyMessage>((hit) => {
    const [path, query] = hit.path.split('?');
    if (hit.method !== 'POST' || path !== '/message')
      return { refused: `${hit.method} ${hit.path}`, reply: goError(404, 'Not Found', 'page not found') };
    if (query?.includes('token=')) return { refused: 'token in the query string', reply: goError(400, 'Bad Request', 'token in the URL') };
    if (hit.headers['x-gotify-key'] !== token)
      return {
        refused: 'X-Gotify-Key',
        reply: goError(401, 'Unauthorized', 'you need to provide a valid access token or user credentials to access this api'),
      };
    const m = json(hit) as GotifyMessage | undefined;
    if (!m || typeof m.message !== 'string' || m.message === '')
      return { refused: 'message', reply: goError(400, 'Bad Request', "Field 'message' is required") };
    if (m.title !== undefined && typeof m.title !== 'string')
      return { refused: 'title', reply: goError(400, 'Bad Request', "Field 'title' must be a string") };
    if (m.priority !== undefined && !Number.isInteger(m.priority))
      return { refused: 'priority', reply: goError(400, 'Bad Request', "Field 'priority' must be an integer") };
    const display = m.extras?.['client::display']?.contentType;
    if (display !== undefined && display !== 'text/plain' && display !== 'text/markdown')
      return { refused: 'contentType', reply: goError(400, 'Bad Request', 'unknown client::display contentType') };
    return {
      payload: m,
      reply: {
        status: 200,
        body: {
          id: 25,
          appid: 5,
          message: m.message,
          title: m.title ?? 'monctl',
          priority: m.priority ?? 0,
          extras: m.extras,
          date: new Date().toISOString(),
        },
      },
    };
  });
}
