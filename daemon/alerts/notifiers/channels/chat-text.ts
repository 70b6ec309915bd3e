import { answerOf } from './api-base.ts';
import type { SendOutcome } from '../../types.ts';

/**
 * Text helpers of the chat channels (DISCORD, TEAMS, GOOGLE_CHAT): escaping that leaves URLs
 * whole (an escaped `_` or `-` inside a link breaks it, and the chats link bare URLs themselves),
 * a cut that respects a provider's length limit without splitting an escape or a surrogate pair,
 * and the provider's JSON error read into the outcome.
 */
const URL_RE = /\bhttps?:\/\/[^\s<>"]+/g;

/** `escapePart` applied to everything in `text` but the http(s) URLs. */
export function escapeOutsideUrls(text: string, escapePart: (part: string) => string): string {
  let out = '';
  let last = 0;
  for (const m of text.matchAll(URL_RE)) {
    const url = urlOf(m[0]);
    out += escapePart(text.slice(last, m.index)) + url;
    last = m.index + url.length;
  }
  return out + escapePart(text.slice(last));
}

/** A URL match without the punctuation that ends the sentence around it: `(https://x/y).` gives `https://x/y`. */
function urlOf(match: string): string {
  let url = match.replace(/[.,:;!?'*_~]+$/, '');
  while (url.endsWith(')') && (url.match(/\(/g)?.length ?? 0) < (url.match(/\)/g)?.length ?? 0))
    url = url.slice(0, -1).replace(/[.,:;!?'*_~]+$/, '');
  return url;
}

/** Markdown's backslash escapes: every character of `chars`, and list or heading marks that start a line. */
export function backslashEscape(text: string, chars: RegExp): string {
  return text.replace(chars, '\\$&').replace(/^(\s*)([-+#]|\d+\.)(?=\s|$)/gm, '$1\\$2');
}

/**
 * At most `max` UTF-16 units (what the providers count, or more than they count), ending in `…`
 * when cut: never half of a surrogate pair, never a lone escaping backslash.
 */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = text.slice(0, max - 1);
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  const slashes = /\\+$/.exec(cut)?.[0].length ?? 0;
  if (slashes % 2 === 1) cut = cut.slice(0, -1);
  return `${cut}…`;
}

/** The default text without its last line when that line only gives `link` (the channel shows the link its own way). */
export function withoutLinkLine(text: string, link: string | null): string {
  if (!link) return text;
  const lines = text.split('\n');
  if (lines.length > 1 && lines.at(-1)!.endsWith(`: ${link}`)) return lines.slice(0, -1).join('\n').trimEnd();
  return text;
}

/**
 * A failed answer's JSON error, when the provider sent one, in place of the raw excerpt: Discord's
 * `{code, message}`, Google's and Power Automate's `{error: {code, message}}`.
 */
export function providerError(status: number, text: string, outcome: SendOutcome): SendOutcome {
  if (outcome.ok) return outcome;
  const body = parseJson(text);
  const error = body && typeof body.error === 'object' && body.error !== null ? (body.error as Record<string, unknown>) : body;
  const message = error && typeof error.message === 'string' ? error.message : null;
  if (!message) return outcome;
  const code = error && (typeof error.code === 'string' || typeof error.code === 'number') ? ` (${error.code})` : '';
  return { ...outcome, error: `HTTP ${status}: ${truncate(message.replace(/\s+/g, ' '), 200)}${code}` };
}

/** The answer as a JSON object, or null (the channels' shared reader, typed loosely for these providers). */
export function parseJson(text: string): Record<string, unknown> | null {
  return answerOf<Record<string, unknown>>(text) ?? null;
}

/** A webhook URL's own checks: a length a provider takes, no fragment (never sent: a paste that went wrong). */
export function webhookUrlProblem(url: string): string | undefined {
  if (url.length > 2048) return 'must be at most 2048 characters';
  if (url.includes('#')) return 'must not carry a #fragment (it is never sent)';
  return undefined;
}
