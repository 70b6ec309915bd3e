import type { OutgoingMessage, SendOutcome } from '../../types.ts';
import type { Channel } from '../channel.ts';
import type { LoadedNotifier } from '../config-types.ts';
import { type PostOptions, postJson } from '../http-post.ts';
import type { RenderedMessage } from '../render.ts';
import { answerOf, baseUrl } from './api-base.ts';
import { cut } from './pager-events.ts';

/**
 * MATRIX: one `m.room.message` per message through the Client-Server API
 * (https://spec.matrix.org/v1.11/client-server-api/#put_matrixclientv3roomsroomidsendeventtypetxnid),
 * with a plain `body` and an HTML `formatted_body`. The transaction id is derived from the message
 * id, the same on every retry: the homeserver answers a repeated PUT with the event it already
 * made, so an answer lost on the way does not post the alert twice.
 */
const escapeHtml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

/** Events are limited to 64 KiB: the text is cut well below, escaping may grow it. */
const MAX_TEXT = 12_000;

/** Room aliases resolved, per notifier and alias; bounded, as every cache here. */
const rooms = new Map<string, string>();
const MAX_ROOMS = 1000;

/** The plain text of HTML a template made: tags dropped, the entities escapeHtml writes read back. */
export function htmlToText(html: string): string {
  return html
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
}

/**
 * The event content. Good news is an `m.notice`, which the default push rule
 * `.m.rule.suppress_notices` keeps silent; problems and tests are `m.text`, which notifies:
 * a bot's alert that rings nobody's phone is missed.
 */
export function matrixContent(rendered: RenderedMessage): Record<string, string> {
  const title = cut(rendered.title, 1000);
  const text = cut(rendered.text, MAX_TEXT);
  const html = rendered.markup
    ? `<strong>${title}</strong><br>${text.replace(/\n/g, '<br>')}`
    : `<strong>${escapeHtml(title)}</strong><br>${escapeHtml(text).replace(/\n/g, '<br>')}`;
  return {
    msgtype: rendered.tone === 'recovery' ? 'm.notice' : 'm.text',
    body: rendered.markup ? htmlToText(`${title}\n${text}`) : `${title}\n${text}`,
    format: 'org.matrix.custom.html',
    formatted_body: html,
  };
}

/** Matrix's refusal `{errcode, error}`; M_LIMIT_EXCEEDED carries `retry_after_ms`. */
function inspect(status: number, text: string, outcome: SendOutcome): SendOutcome {
  const json = answerOf<Record<string, unknown>>(text);
  if (outcome.ok || !json || typeof json.errcode !== 'string') return outcome;
  const wait = typeof json.retry_after_ms === 'number' && json.retry_after_ms >= 0 ? json.retry_after_ms : undefined;
  return {
    ...outcome,
    error: cut(`HTTP ${status}: ${json.errcode}${typeof json.error === 'string' ? `: ${json.error}` : ''}`, 500),
    ...(wait !== undefined && wait > (outcome.retryAfterMs ?? 0) ? { retryAfterMs: wait } : {}),
  };
}

/** The room id: `roomId` itself, or the alias looked up once (`GET /directory/room/{alias}`). */
async function roomOf(n: LoadedNotifier, headers: Record<string, string>, io: PostOptions): Promise<{ id?: string; failed?: SendOutcome }> {
  const room = n.config.roomId!;
  if (room.startsWith('!')) return { id: room };
  const key = `${n.id}\n${n.config.homeserver}\n${room}`;
  const cached = rooms.get(key);
  if (cached) return { id: cached };
  let id: string | undefined;
  const outcome = await postJson(`${n.config.homeserver}/_matrix/client/v3/directory/room/${encodeURIComponent(room)}`, '', headers, io, {
    method: 'GET',
    inspect: (status, text, o) => {
      const json = answerOf<Record<string, unknown>>(text);
      if (o.ok && typeof json?.room_id === 'string' && json.room_id.startsWith('!')) id = json.room_id;
      return inspect(status, text, o);
    },
  });
  if (!outcome.ok) return { failed: { ...outcome, error: `room alias ${room}: ${outcome.error}` } };
  if (!id) return { failed: { ...outcome, ok: false, retryable: true, error: `room alias ${room}: no room_id in the answer` } };
  if (rooms.size >= MAX_ROOMS) rooms.clear();
  rooms.set(key, id);
  return { id };
}

async function send(n: LoadedNotifier, message: OutgoingMessage, rendered: RenderedMessage, io: PostOptions): Promise<SendOutcome> {
  const headers = { authorization: `Bearer ${n.secrets.token}` };
  const room = await roomOf(n, headers, io);
  if (!room.id) return room.failed!;
  const txnId = encodeURIComponent(`monctl-${message.id}`);
  const url = `${n.config.homeserver}/_matrix/client/v3/rooms/${encodeURIComponent(room.id)}/send/m.room.message/${txnId}`;
  return postJson(url, JSON.stringify(matrixContent(rendered)), headers, io, { method: 'PUT', inspect });
}

export const matrix: Channel = {
  escape: escapeHtml,
  check(_flat, out, err) {
    out.config.homeserver = baseUrl(out.config.homeserver!, 'homeserver', err);
    if (!/^[!#][^\s:]+:[^\s]+$/.test(out.config.roomId!)) err('roomId', 'must be a room id (!abc:example.org) or alias (#ops:example.org)');
    if (!/^[\x21-\x7e]{1,1024}$/.test(out.secrets.token!)) err('token', 'must be 1 to 1024 printable characters without spaces');
  },
  send,
};
