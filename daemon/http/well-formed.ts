import { badRequest, type FieldError } from '../../src/errors.ts';

/**
 * Text that cannot be kept as sent is refused, never repaired: a lenient
 * decoder turns invalid UTF-8 and lone surrogates into U+FFFD, and two
 * different names then become one.
 */
const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const lenient = new TextDecoder('utf-8', { ignoreBOM: true });

/** Where the first invalid sequence starts: the first U+FFFD the lenient decoder made up. */
function firstInvalidByte(raw: Buffer): number {
  const text = lenient.decode(raw);
  for (let i = text.indexOf('\uFFFD'); i >= 0; i = text.indexOf('\uFFFD', i + 1)) {
    const at = Buffer.byteLength(text.slice(0, i));
    // A U+FFFD that was sent (EF BF BD) is text like any other.
    if (raw[at] !== 0xef || raw[at + 1] !== 0xbf || raw[at + 2] !== 0xbd) return at;
  }
  return -1;
}

/** A body as text: 400 naming `body` and the byte offset when it is not UTF-8. */
export function decodeUtf8Body(raw: Buffer): string {
  try {
    return strict.decode(raw);
  } catch {
    const message = `is not valid UTF-8: invalid byte sequence at byte ${firstInvalidByte(raw)}`;
    throw badRequest(`Request body ${message}`, [{ field: 'body', message }]);
  }
}

const LONE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const describeLone = (s: string) => {
  const at = s.search(LONE);
  return `is not well-formed Unicode: lone surrogate U+${s.charCodeAt(at).toString(16).toUpperCase()} at character ${at}`;
};
const child = (path: string, key: string | number) => (typeof key === 'number' ? `${path}[${key}]` : path === '' ? key : `${path}.${key}`);

/**
 * The first string or key of a parsed JSON value that holds a lone surrogate
 * (only a `\uD800`-style escape can make one once the text decoded strictly),
 * named as validation names fields: `name`, `groupIds[1]`, `a.b`. Iterative,
 * so a value nested a million deep cannot overflow the stack.
 */
export function loneSurrogateIn(value: unknown): FieldError | undefined {
  const stack: Array<[unknown, string]> = [[value, '']];
  while (stack.length) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      if (!v.isWellFormed()) return { field: path || 'body', message: describeLone(v) };
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], child(path, i)]);
    } else if (v !== null && typeof v === 'object') {
      const keys = Object.keys(v);
      const bad = keys.find((k) => !k.isWellFormed());
      if (bad !== undefined) return { field: path || 'body', message: `has a key that is not well-formed Unicode: ${JSON.stringify(bad)}` };
      for (let i = keys.length - 1; i >= 0; i--) stack.push([(v as Record<string, unknown>)[keys[i]], child(path, keys[i])]);
    }
  }
  return undefined;
}

/** Parsed JSON text: 400 naming the field when a string or key is not well-formed Unicode. */
export function refuseLoneSurrogates(text: string, value: unknown): void {
  // Cheap guard: without a surrogate escape in the text there is nothing to find.
  if (!/\\u[dD][89a-fA-F]/.test(text)) return;
  const error = loneSurrogateIn(value);
  if (error) throw badRequest(`Invalid request body: ${error.field}: ${error.message}`, [error]);
}

/**
 * A query string as name/value pairs, decoded as URLSearchParams does (`+` is
 * a space, a `%` that starts no escape stays as sent), except that escapes
 * which decode to invalid UTF-8 are a 400 naming the parameter.
 */
export function parseQueryStrict(query: string, where: 'query' | 'form' = 'query'): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (const part of query.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const [rawName, rawValue] = eq < 0 ? [part, ''] : [part.slice(0, eq), part.slice(eq + 1)];
    const name = decodeComponent(rawName);
    if (name === undefined) {
      const message = `has a ${where === 'query' ? 'parameter' : 'field'} name that is not valid UTF-8 once percent-decoded`;
      throw badRequest(`Invalid ${where}: ${message}`, [{ field: where, message }]);
    }
    const value = decodeComponent(rawValue);
    if (value === undefined) {
      const message = 'is not valid UTF-8 once percent-decoded';
      throw badRequest(`Invalid ${where === 'query' ? 'query parameter' : 'form field'}: ${name}: ${message}`, [{ field: name, message }]);
    }
    pairs.push([name, value]);
  }
  return pairs;
}

function decodeComponent(raw: string): string | undefined {
  const spaced = raw.replaceAll('+', ' ');
  if (!spaced.includes('%')) return spaced;
  try {
    // A `%` that starts no escape is kept (as URLSearchParams does); what is left throws only on invalid UTF-8.
    return decodeURIComponent(spaced.replace(/%(?![0-9A-Fa-f]{2})/g, '%25'));
  } catch {
    return undefined;
  }
}
