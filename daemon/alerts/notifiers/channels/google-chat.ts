import type { Channel } from '../channel.ts';
import type { LoadedNotifier } from '../config-types.ts';
import { postJson } from '../http-post.ts';
import type { RenderedMessage } from '../render.ts';
import { escapeOutsideUrls, providerError, truncate, webhookUrlProblem, withoutLinkLine } from './chat-text.ts';

/**
 * GOOGLE_CHAT: a space's incoming webhook
 * (https://developers.google.com/workspace/chat/quickstart/webhooks), a text message in Chat's
 * markup: `*bold*` title, `<url|label>` link. No `threadKey`: each message starts its own thread,
 * as alerts in a space read best one per post.
 */
const MAX_TEXT = 4096;

/**
 * Chat's text markup has no escape character (https://developers.google.com/workspace/chat/format-messages),
 * so plain text gets look-alikes of the characters it reads: `*` `_` `~` `` ` `` pairs would format,
 * `<users/all>` would mention everyone and `<url|label>` would link.
 */
const LOOK_ALIKES: Record<string, string> = { '*': '∗', _: 'ˍ', '~': '∼', '`': 'ˋ', '<': '‹', '>': '›' };
const escapeChat = (text: string) => text.replace(/[*_~`<>]/g, (c) => LOOK_ALIKES[c]);
const escapeText = (text: string) => escapeOutsideUrls(text, escapeChat);

export function googleChatBody(rendered: RenderedMessage): string {
  const link = rendered.link;
  const title = rendered.markup ? rendered.title : escapeText(rendered.title);
  const body = rendered.markup ? rendered.text : escapeText(withoutLinkLine(rendered.text, link));
  const tail = link && !rendered.markup ? `\n<${link}|Open in monctl>` : '';
  return JSON.stringify({ text: `${truncate(`*${title.trim()}*\n${body}`, MAX_TEXT - tail.length)}${tail}` });
}

export const googleChat: Channel = {
  escape: escapeText,
  check(flat, _out, err) {
    const problem = webhookUrlProblem(flat.url!);
    if (problem) return err('url', problem);
    // Google's own URLs carry both: a copy that lost them is refused by Chat with a 400 at every alert.
    const url = new URL(flat.url!);
    if (url.hostname === 'chat.googleapis.com' && !(url.searchParams.get('key') && url.searchParams.get('token')))
      err('url', 'must be the whole webhook URL, with its key= and token= parameters');
  },
  send: (n: LoadedNotifier, _message, rendered, io) =>
    postJson(n.secrets.url!, googleChatBody(rendered), { 'content-type': 'application/json; charset=UTF-8' }, io, {
      inspect: providerError,
    }),
};
