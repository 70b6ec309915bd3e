import { fitTokens } from './fit.ts';
import type { SendOutcome } from '../../types.ts';
import type { Channel } from '../channel.ts';
import type { LoadedNotifier } from '../config-types.ts';
import { postJson } from '../http-post.ts';
import type { RenderedMessage } from '../render.ts';
import { answerOf, baseUrl, integerIn } from './api-base.ts';

/**
 * PUSHOVER: `POST /1/messages.json` (https://pushover.net/api) with the application token and
 * the user key in the JSON body, the message in Pushover's HTML (`html: 1`), and the link as
 * `url`. Emergency priority (2) repeats every `retry` seconds until acknowledged or `expire`;
 * good news is sent at most at normal priority (0), so that a recovery does not ring like an
 * outage.
 */
const API = 'https://api.pushover.net';
/** Pushover's limits, in characters. */
const MAX_TITLE = 250;
const MAX_MESSAGE = 1024;
const MAX_URL = 512;
const DEFAULT_RETRY_S = 60;
const DEFAULT_EXPIRE_S = 3600;

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ENTITIES[c]);
/** The title is not HTML on Pushover: a template's title (variables escaped) is read back as text. */
const unescapeHtml = (text: string): string =>
  text.replace(/&(amp|lt|gt|quot|#39);/g, (_, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[e]!);

/** `text` cut to `max` characters (code points) with `…`, never inside an entity or a tag. */
export function fitHtml(text: string, max: number): string {
  const tokens = text.match(/&#?[A-Za-z0-9]{1,10};|<[^<>]{0,200}>|[\s\S]/gu) ?? [];
  return fitTokens(text, tokens, (t) => [...t].length, max);
}

/** The JSON body of one message. */
export function pushoverBody(n: LoadedNotifier, rendered: RenderedMessage): Record<string, string | number> {
  const configured = n.config.priority ?? 0;
  const priority = rendered.tone === 'problem' ? configured : Math.min(configured, 0);
  const title = rendered.markup ? unescapeHtml(rendered.title) : rendered.title;
  const message = fitHtml(rendered.markup ? rendered.text : escapeHtml(rendered.text), MAX_MESSAGE);
  const link = rendered.link && rendered.link.length <= MAX_URL ? rendered.link : null;
  return {
    token: n.secrets.token!,
    user: n.secrets.userKey!,
    title: [...title].length > MAX_TITLE ? `${[...title].slice(0, MAX_TITLE - 1).join('')}…` : title,
    // Pushover refuses an empty message; a template may render one.
    message: message.trim() ? message : escapeHtml(title),
    html: 1,
    priority,
    ...(link ? { url: link, url_title: 'Open in monctl' } : {}),
    ...(priority === 2 ? { retry: n.config.retrySeconds ?? DEFAULT_RETRY_S, expire: n.config.expireSeconds ?? DEFAULT_EXPIRE_S } : {}),
  };
}

interface PushoverAnswer {
  status: number;
  errors: string[];
}

/** Reads `{status: 0, errors: [...]}` (sent with a 4xx) into the error. */
function inspect(status: number, text: string, o: SendOutcome): SendOutcome {
  const answer = answerOf<PushoverAnswer>(text);
  if (!answer || answer.status === 1) return o;
  const errors = Array.isArray(answer.errors) ? answer.errors.filter((e) => typeof e === 'string').join('; ') : '';
  return { ...o, ok: false, statusCode: status, error: `Pushover ${status}: ${errors.slice(0, 300) || 'status 0'}` };
}

const KEY = /^[A-Za-z0-9]{30}$/;

export const pushover: Channel = {
  escape: escapeHtml,
  check(flat, out, err) {
    if (!KEY.test(flat.userKey ?? '')) err('userKey', 'must be a Pushover user or group key: 30 letters and digits');
    if (!KEY.test(flat.token ?? '')) err('token', 'must be a Pushover application token: 30 letters and digits');
    out.config.priority = flat.priority === undefined ? 0 : integerIn(flat.priority, -2, 2, 'priority', err);
    for (const field of ['retrySeconds', 'expireSeconds'] as const) {
      if (flat[field] !== undefined && out.config.priority !== 2) {
        err(field, 'applies only to emergency priority (2): set priority 2, or remove it');
      }
    }
    if (flat.apiUrl !== undefined) out.config.apiUrl = baseUrl(flat.apiUrl, 'apiUrl', err);
  },
  send(n, _message, rendered, io) {
    return postJson(`${n.config.apiUrl ?? API}/1/messages.json`, JSON.stringify(pushoverBody(n, rendered)), {}, io, { inspect });
  },
};
