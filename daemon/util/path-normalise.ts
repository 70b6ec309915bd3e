/**
 * The edge's request-path normalisation (RFC 3986 section 6.2.2 and 5.2.4),
 * so that the path a route is matched on is the path its target receives, and
 * no target behind can read it as something else. Pure and cheap: a path with
 * no `/.`, `//`, `%`, `\` or `#` (most of them) is returned as it is.
 *
 * What it does, in order:
 * - percent-escapes: `%` must be followed by two hex digits. Encoded unreserved
 *   characters (`A-Z a-z 0-9 - . _ ~`) are decoded (RFC 3986 says they are the
 *   same URI), so `%2e`, `%2E` and `.%2e` are dots; every other escape is kept,
 *   with upper-case hex. Encoded NUL and control characters (`%00`-`%1F`, `%7F`)
 *   are refused.
 * - `\` and `#` are refused: neither belongs in a request path, and some servers
 *   read `\` as `/`. `%2F` and `%5C` are encoded slashes: reported, for the route
 *   to refuse unless it allows them.
 * - empty segments are merged (`//` is `/`, as nginx does by default); a trailing
 *   slash is kept.
 * - `.` and `..` segments are resolved; `..` above the root is refused.
 * - segments that other servers read as dot-segments are refused: a dot-segment
 *   with `;` parameters (`..;` is `..` to Tomcat and Spring), a segment of only
 *   dots and encoded spaces (`...`, `..%20`, which Windows trims to `..`), and,
 *   when the path holds encoded slashes, a dot-segment between them (`..%2F`).
 */

export type NormalisedPath = { path: string; encodedSlash: boolean } | { error: string };

/** A dot-segment can only start right after a `/`; `//` needs merging; the rest needs decoding or refusing. */
const NEEDS_WORK = /\/[./]|[%\\#]/;
const HEX = /^[0-9A-Fa-f]{2}$/;
const ENCODED_SLASH = /%2F|%5C/;
/** What a segment is cut at when looking for a dot-segment carrying path parameters. */
const PARAMS = /;|%3B/;
/** Dots and encoded spaces only (Windows trims trailing dots and spaces from names). */
const DOTS_AND_SPACES = /^\.(?:\.|%20)*$/;

function unreserved(byte: number): boolean {
  return (
    (byte >= 0x30 && byte <= 0x39) ||
    (byte >= 0x41 && byte <= 0x5a) ||
    (byte >= 0x61 && byte <= 0x7a) ||
    byte === 0x2d ||
    byte === 0x2e ||
    byte === 0x5f ||
    byte === 0x7e
  );
}

/** Would some server read this piece as `.` or `..`? */
function dotLike(piece: string): boolean {
  const cut = piece.search(PARAMS);
  return DOTS_AND_SPACES.test(cut < 0 ? piece : piece.slice(0, cut));
}

/** Decodes unreserved escapes and upper-cases the others; an error message for what cannot be accepted. */
function canonicalEscapes(raw: string): { text: string; encodedSlash: boolean } | { error: string } {
  let text = '';
  let encodedSlash = false;
  let from = 0;
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c === 0x5c) return { error: 'a backslash in the path' };
    if (c === 0x23) return { error: 'a fragment (#) in the request target' };
    if (c !== 0x25) continue;
    const hex = raw.slice(i + 1, i + 3);
    if (!HEX.test(hex)) return { error: 'malformed percent-encoding in the path' };
    const byte = Number.parseInt(hex, 16);
    if (byte === 0) return { error: 'an encoded NUL (%00) in the path' };
    if (byte < 0x20 || byte === 0x7f) return { error: `an encoded control character (%${hex.toUpperCase()}) in the path` };
    if (byte === 0x2f || byte === 0x5c) encodedSlash = true;
    text += raw.slice(from, i) + (unreserved(byte) ? String.fromCharCode(byte) : `%${hex.toUpperCase()}`);
    from = i + 3;
    i += 2;
  }
  return { text: text + raw.slice(from), encodedSlash };
}

/** Normalises an origin-form path (no query string), or says why it is refused. */
export function normalisePath(raw: string): NormalisedPath {
  if (raw.charCodeAt(0) !== 0x2f) return { error: 'the path must start with /' };
  if (!NEEDS_WORK.test(raw)) return { path: raw, encodedSlash: false };
  const canonical = canonicalEscapes(raw);
  if ('error' in canonical) return canonical;
  const { text, encodedSlash } = canonical;
  const parts = text.split('/');
  const kept: string[] = [];
  for (let k = 1; k < parts.length; k++) {
    const segment = parts[k];
    const last = k === parts.length - 1;
    if (segment === '' && !last) continue;
    if (segment === '.' || segment === '..') {
      if (segment === '..' && kept.pop() === undefined) return { error: 'the path goes above the root (..)' };
      if (last) kept.push('');
      continue;
    }
    if (dotLike(segment)) return { error: `a segment that servers may read as a dot-segment (${segment})` };
    if (encodedSlash && ENCODED_SLASH.test(segment) && segment.split(ENCODED_SLASH).some(dotLike)) {
      return { error: `a dot-segment behind an encoded slash (${segment})` };
    }
    kept.push(segment);
  }
  const path = `/${kept.join('/')}`;
  // Judged on the result: an encoded slash that `..` removed never reaches the target.
  return { path, encodedSlash: encodedSlash && ENCODED_SLASH.test(path) };
}

/** Does `path` (normalised) fall under `prefix` at a segment boundary? `/api` takes `/api` and `/api/x`, not `/apix`. */
export function underPrefix(path: string, prefix: string): boolean {
  if (!path.startsWith(prefix)) return false;
  return path.length === prefix.length || prefix.endsWith('/') || path.charCodeAt(prefix.length) === 0x2f;
}
