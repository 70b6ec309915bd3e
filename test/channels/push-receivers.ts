import { json, type ProviderReceiver, type Reply, serve } from './provider-receiver.ts';

/**
 * Pushover (https://pushover.net/api) and Gotify (https://gotify.net/api-docs,
 * https://gotify.net/docs/msgextras) receivers, as strict as the services.
 */
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
