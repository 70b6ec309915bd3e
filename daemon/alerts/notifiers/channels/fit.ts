/**
 * A text cut to `max` shown characters, ending in `…`, from its tokens: each token (an escape, an
 * entity, a tag, a code point) is kept whole or dropped, and counts as `width` says it shows.
 * Telegram's MarkdownV2 and Pushover's HTML count what the reader sees, not the bytes sent.
 */
export function fitTokens(text: string, tokens: readonly string[], width: (token: string) => number, max: number): string {
  if (tokens.reduce((sum, t) => sum + width(t), 0) <= max) return text;
  let kept = '';
  let used = 0;
  for (const t of tokens) {
    if (used + width(t) > max - 1) break;
    kept += t;
    used += width(t);
  }
  return `${kept}…`;
}
