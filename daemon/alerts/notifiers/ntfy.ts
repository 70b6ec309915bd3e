import type { OutgoingMessage, SendOutcome } from '../types.ts';
import type { LoadedNotifier } from './config-types.ts';
import { postJson, type PostOptions } from './http-post.ts';
import type { RenderedMessage } from './render.ts';

/**
 * NTFY: JSON published to the server's root (`{topic, title, message,
 * priority, tags, click}`), which carries any Unicode in the title where a
 * `Title:` header could not. Good news is sent at most at the default
 * priority, so a recovery does not ring like an outage.
 */
const MAX_MESSAGE_BYTES = 4000; // ntfy turns longer messages into attachments

const TAGS = { problem: ['rotating_light'], recovery: ['white_check_mark'], test: ['test_tube'] } as const;

export function ntfyBody(n: LoadedNotifier, rendered: RenderedMessage): string {
  const configured = n.config.priority ?? 3;
  let message = rendered.text;
  if (Buffer.byteLength(message) > MAX_MESSAGE_BYTES) {
    message = `${Buffer.from(message)
      .subarray(0, MAX_MESSAGE_BYTES - 4)
      .toString('utf8')
      .replace(/\uFFFD+$/, '')}\n…`;
  }
  return JSON.stringify({
    topic: n.config.topic,
    title: rendered.title,
    message,
    priority: rendered.tone === 'problem' ? configured : Math.min(configured, 3),
    tags: TAGS[rendered.tone],
    ...(rendered.link ? { click: rendered.link } : {}),
  });
}

export function sendNtfy(n: LoadedNotifier, _message: OutgoingMessage, rendered: RenderedMessage, io: PostOptions): Promise<SendOutcome> {
  const headers: Record<string, string> = n.secrets.token ? { authorization: `Bearer ${n.secrets.token}` } : {};
  return postJson(`${n.config.url}/`, ntfyBody(n, rendered), headers, io);
}
