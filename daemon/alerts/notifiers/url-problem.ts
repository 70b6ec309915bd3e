/**
 * Whether a notifier's URL is usable, for validate.ts and the channel modules (channels/), which
 * validate.ts imports: kept apart so that neither imports the other.
 */
/** An http(s) URL, or why not. Credentials in a non-secret URL would be shown to every reader: refused. */
export function urlProblem(value: string, secret: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute http:// or https:// URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `must be an http:// or https:// URL, not ${url.protocol}`;
  if (!secret && (url.username || url.password)) return 'must not carry credentials (use a header or the token field)';
  return undefined;
}
