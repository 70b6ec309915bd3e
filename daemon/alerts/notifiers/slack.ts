import type { OutgoingMessage, SendOutcome } from '../types.ts';
import type { LoadedNotifier } from './config-types.ts';
import { postJson, type PostOptions } from './http-post.ts';
import type { RenderedMessage } from './render.ts';

/**
 * SLACK: an incoming-webhook payload. `text` carries the whole message (title
 * on the first line), which is all Mattermost and Rocket.Chat read; Slack
 * wants `&`, `<` and `>` escaped in it, and the others show the entities
 * as the characters.
 */
export const escapeMrkdwn = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A template's output (`markup`) is mrkdwn already, its variables escaped: sent as it is. */
export function slackBody(rendered: RenderedMessage): string {
  const escape = rendered.markup ? (s: string) => s : escapeMrkdwn;
  return JSON.stringify({ text: `${escape(rendered.title)}\n${escape(rendered.text)}` });
}

export function sendSlack(n: LoadedNotifier, _message: OutgoingMessage, rendered: RenderedMessage, io: PostOptions): Promise<SendOutcome> {
  return postJson(n.secrets.url!, slackBody(rendered), {}, io);
}
