/**
 * `pat()`: Go's `filepath.Match` as Gatus uses it (`*`, `?`, `[a-z]`, `[^…]`, `\` escapes), with
 * `/` removed from both the pattern and the value first, as Gatus does. Matched by the greedy
 * two-pointer walk, O(pattern × value) at worst, never a backtracking RegExp.
 */

type Token = { t: 'star' } | { t: 'one' } | { t: 'char'; c: string } | { t: 'class'; negated: boolean; ranges: [string, string][] };

/** Thrown for a malformed pattern; `offset` is 0-based in the pattern as written. */
export class GlobError extends Error {
  offset: number;
  constructor(message: string, offset: number) {
    super(message);
    this.offset = offset;
  }
}

function tokenize(pattern: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const escaped = (where: number) => {
    if (i >= pattern.length) throw new GlobError('pattern ends with a lone \\', where);
    return pattern[i++];
  };
  while (i < pattern.length) {
    const start = i;
    const c = pattern[i++];
    if (c === '/') continue;
    if (c === '*') {
      if (tokens.at(-1)?.t !== 'star') tokens.push({ t: 'star' });
    } else if (c === '?') tokens.push({ t: 'one' });
    else if (c === '\\') tokens.push({ t: 'char', c: escaped(start) });
    else if (c === '[') {
      const negated = pattern[i] === '^';
      if (negated) i++;
      const ranges: [string, string][] = [];
      for (;;) {
        if (i >= pattern.length) throw new GlobError('[ without a closing ]', start);
        if (pattern[i] === ']' && ranges.length > 0) break;
        const one = () => {
          const ch = pattern[i];
          if (ch === '-' || ch === ']') throw new GlobError(`"${ch}" in a [ ] class must be escaped`, i);
          i++;
          return ch === '\\' ? escaped(i - 1) : ch;
        };
        const lo = one();
        let hi = lo;
        if (pattern[i] === '-') {
          i++;
          if (i >= pattern.length) throw new GlobError('[ without a closing ]', start);
          hi = one();
        }
        if (hi < lo) throw new GlobError(`range ${lo}-${hi} is reversed`, start);
        ranges.push([lo, hi]);
      }
      i++;
      tokens.push({ t: 'class', negated, ranges });
    } else tokens.push({ t: 'char', c });
  }
  return tokens;
}

function matchesOne(token: Token, ch: string): boolean {
  if (token.t === 'one') return true;
  if (token.t === 'char') return token.c === ch;
  if (token.t === 'class') return token.ranges.some(([lo, hi]) => lo <= ch && ch <= hi) !== token.negated;
  return false;
}

/** Compiles a pattern into a matcher; throws GlobError when Go would return ErrBadPattern. */
export function compileGlob(pattern: string): (value: string) => boolean {
  if (pattern === '*') return () => true;
  const tokens = tokenize(pattern);
  return (raw) => {
    const s = raw.includes('/') ? raw.replaceAll('/', '') : raw;
    let p = 0;
    let i = 0;
    let starP = -1;
    let starI = 0;
    while (i < s.length) {
      const token = tokens[p];
      if (token && token.t === 'star') {
        starP = p++;
        starI = i;
      } else if (token && matchesOne(token, s[i])) {
        p++;
        i++;
      } else if (starP >= 0) {
        p = starP + 1;
        i = ++starI;
      } else return false;
    }
    while (tokens[p]?.t === 'star') p++;
    return p === tokens.length;
  };
}
