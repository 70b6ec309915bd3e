/** Where a sign-in lands when it was given no usable return path. */
export const DEFAULT_RETURN = '/api';

const MAX_LENGTH = 2048;
const CONTROL = /[\x00-\x1f\x7f]/;

/**
 * The `return` parameter of a sign-in if it is a path on this origin, else
 * `fallback` (DEFAULT_RETURN for the daemon's own sign-in, `/` for a
 * route's): it must start with one `/` (not `//` nor `/\`, which browsers
 * read as another host), hold no backslash, control character or
 * whitespace that a browser would drop, and be short. It is then resolved
 * against a placeholder origin and must stay on it, and its resolved path
 * must not start with `//`, so nothing a URL parser normalises can lead
 * elsewhere. An open redirect would turn the daemon's
 * login into a phishing step.
 */
export function safeReturnPath(raw: string | null | undefined, fallback = DEFAULT_RETURN): string {
  if (!raw || raw.length > MAX_LENGTH) return fallback;
  if (raw[0] !== '/' || raw[1] === '/' || raw.includes('\\') || CONTROL.test(raw) || /\s/.test(raw)) return fallback;
  const base = 'http://return.invalid';
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    return fallback;
  }
  // Dot segments resolve too: `/.//evil.example` becomes `//evil.example`, another host to a browser.
  if (url.origin !== base || url.pathname.startsWith('//')) return fallback;
  return `${url.pathname}${url.search}${url.hash}`;
}
