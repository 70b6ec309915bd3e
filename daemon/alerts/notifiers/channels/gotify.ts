import type { SendOutcome } from '../../types.ts';
import type { Channel } from '../channel.ts';
import { postJson } from '../http-post.ts';
import { answerOf, baseUrl, integerIn } from './api-base.ts';

/**
 * GOTIFY: `POST {server}/message` (https://gotify.net/api-docs) with the application token in
 * the `X-Gotify-Key` header (in the query string it would be written to every proxy's access
 * log), the text in Markdown (`client::display`), and the link as the notification's click
 * target. Good news is sent at most at the default priority (5).
 */
const DEFAULT_PRIORITY = 5;

/**
 * Plain text as CommonMark shows it: every ASCII punctuation character Markdown (or the HTML it
 * lets through) could read is escaped with a backslash, and a line break stays a line break
 * (two spaces before it: CommonMark joins single lines into one paragraph).
 */
export const escapeMarkdown = (text: string): string => text.replace(/[\\`*_{}[\]()<>#+\-.!|~&]/g, '\\$&').replace(/\n/g, '  \n');
/** The title is shown as text: a template's title (variables escaped) loses the escapes. */
const unescapeMarkdown = (text: string): string => text.replace(/\\([!-/:-@[-`{-~])/g, '$1');

interface GotifyError {
  error: string;
  errorCode: number;
  errorDescription: string;
}

/** Reads `{error, errorCode, errorDescription}` into the error. */
function inspect(status: number, text: string, o: SendOutcome): SendOutcome {
  if (o.ok) return o;
  const answer = answerOf<GotifyError>(text);
  if (typeof answer?.errorDescription !== 'string') return o;
  return { ...o, error: `Gotify ${answer.errorCode ?? status} ${answer.error ?? ''}: ${answer.errorDescription.slice(0, 300)}` };
}

export const gotify: Channel = {
  escape: escapeMarkdown,
  check(flat, out, err) {
    out.config.url = baseUrl(flat.url ?? '', 'url', err);
    if (!/^[\x21-\x7e]{1,512}$/.test(flat.token ?? '')) err('token', 'must be 1 to 512 printable characters without spaces');
    out.config.priority = flat.priority === undefined ? DEFAULT_PRIORITY : integerIn(flat.priority, 0, 10, 'priority', err);
  },
  send(n, _message, rendered, io) {
    const configured = n.config.priority ?? DEFAULT_PRIORITY;
    const title = rendered.markup ? unescapeMarkdown(rendered.title) : rendered.title;
    const message = rendered.markup ? rendered.text : escapeMarkdown(rendered.text);
    const body = {
      title,
      // Gotify refuses an empty message; a template may render one.
      message: message.trim() ? message : escapeMarkdown(title),
      priority: rendered.tone === 'problem' ? configured : Math.min(configured, DEFAULT_PRIORITY),
      extras: {
        'client::display': { contentType: 'text/markdown' },
        ...(rendered.link ? { 'client::notification': { click: { url: rendered.link } } } : {}),
      },
    };
    return postJson(`${n.config.url}/message`, JSON.stringify(body), { 'x-gotify-key': n.secrets.token! }, io, { inspect });
  },
};
