import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalisePath, underPrefix } from '../../daemon/util/path-normalise.ts';

const ok = (raw: string) => {
  const out = normalisePath(raw);
  if ('error' in out) throw new Error(`${raw} refused: ${out.error}`);
  return out;
};
const refused = (raw: string) => 'error' in normalisePath(raw);

/**
 * A lenient target, as servers behind a proxy are: it decodes every escape once
 * (encoded slashes too), reads `\` as `/`, drops `;` parameters, reads a segment of
 * dots and spaces as `.` or `..`, and resolves dot-segments (clamped at the root).
 */
function lenientTarget(path: string): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    decoded = path;
  }
  const out: string[] = [];
  for (let seg of decoded.replace(/\\/g, '/').split('/').slice(1)) {
    seg = seg.split(';')[0];
    if (/^\.[. ]*$/.test(seg)) seg = /^\. *$/.test(seg) ? '.' : '..';
    if (seg === '..') out.pop();
    else if (seg !== '.' && seg !== '') out.push(seg);
  }
  return `/${out.join('/')}`;
}

const separators = ['/', '/', '/', '//', '\\', '%2f', '%5C'];
const segments = [
  'public',
  'secret',
  'a',
  'flag.txt',
  '.',
  '..',
  '%2e',
  '%2E%2e',
  '.%2e',
  '..;',
  '.;x',
  '..%3b',
  '...',
  '..%20',
  '%2e.%20',
  '..%2fsecret',
  'a%2f..',
  '',
  '%00',
  '%0a',
  '%41',
  '%zz',
  '%',
  '#',
  'caf%c3%a9',
  '%252e%252e',
  ';x',
  '%20',
];
const rawPath = fc
  .array(fc.tuple(fc.constantFrom(...separators), fc.constantFrom(...segments)), { maxLength: 8 })
  .map((parts) => `/public${parts.map(([sep, seg]) => sep + seg).join('')}`);
const prefixes = ['/', '/public', '/public/', '/a', '/a/public', '/secret'];

describe('edge path normalisation', () => {
  it('resolves dot-segments, decoded dots included, and merges slashes', () => {
    expect(ok('/public/../secret/flag.txt').path).toBe('/secret/flag.txt');
    expect(ok('/public/%2e%2e/secret/flag.txt').path).toBe('/secret/flag.txt');
    expect(ok('/public/.%2E/secret').path).toBe('/secret');
    expect(ok('/a/./b/%2e/c').path).toBe('/a/b/c');
    expect(ok('/a//b///c/').path).toBe('/a/b/c/');
    expect(ok('/a/b/..').path).toBe('/a/');
    expect(ok('/a/.').path).toBe('/a/');
    expect(ok('/..a/.b./.well-known').path).toBe('/..a/.b./.well-known');
  });

  it('decodes unreserved escapes, upper-cases the others and keeps them encoded', () => {
    expect(ok('/%41%7e%2d/caf%c3%a9/a%3fb%20c').path).toBe('/A~-/caf%C3%A9/a%3Fb%20c');
    expect(ok('/x%252e%252e/y').path).toBe('/x%252e%252e/y');
  });

  it('returns paths that need nothing as they are, the same string', () => {
    const raw = '/api/v1/items/42;v=1';
    expect(normalisePath(raw)).toEqual({ path: raw, encodedSlash: false });
    expect(ok('/static/app.min.js').path).toBe('/static/app.min.js');
  });

  it('reports encoded slashes and refuses dot-segments between them', () => {
    expect(ok('/pkg/@scope%2fname')).toEqual({ path: '/pkg/@scope%2Fname', encodedSlash: true });
    expect(ok('/a%5Cb').encodedSlash).toBe(true);
    expect(refused('/public/..%2fsecret')).toBe(true);
    expect(refused('/public/%2e%2e%5Csecret')).toBe(true);
    expect(refused('/public%2f..%2f..%2fsecret')).toBe(true);
  });

  it('refuses what cannot be normalised safely', () => {
    for (const raw of [
      '/..',
      '/../etc/passwd',
      '/a/../..',
      '/%2e%2e/x',
      '/a%00b',
      '/a%0d%0aSet-Cookie:x',
      '/a%7f',
      '/a\\..\\b',
      '/a#b',
      '/a%zz',
      '/a%2',
      '/public/..;/secret',
      '/public/.;x/secret',
      '/public/..%3Bx/secret',
      '/public/.../secret',
      '/public/..%20/secret',
      'public',
      '*',
      '',
    ]) {
      expect(refused(raw), raw).toBe(true);
    }
  });

  it('matches prefixes at segment boundaries only', () => {
    expect(underPrefix('/api', '/api')).toBe(true);
    expect(underPrefix('/api/x', '/api')).toBe(true);
    expect(underPrefix('/apix', '/api')).toBe(false);
    expect(underPrefix('/api%2Fx', '/api')).toBe(false);
    expect(underPrefix('/public/x', '/public/')).toBe(true);
    expect(underPrefix('/public/', '/public/')).toBe(true);
    expect(underPrefix('/public', '/public/')).toBe(false);
    expect(underPrefix('/anything', '/')).toBe(true);
  });

  it('is idempotent and leaves no dot-segment, empty segment or lower-case escape', () => {
    fc.assert(
      fc.property(rawPath, (raw) => {
        const out = normalisePath(raw);
        if ('error' in out) return;
        expect(out.path.startsWith('/')).toBe(true);
        expect(out.path).not.toMatch(/\/\.\.?(\/|$)|\/\/|%[0-9a-f][a-f]|%[a-f][0-9a-f]|\\|#/);
        expect(normalisePath(out.path)).toEqual(out);
      }),
      { numRuns: 2000 },
    );
  });

  it('never forwards a path that a lenient target reads outside the prefix it matched', () => {
    fc.assert(
      fc.property(rawPath, fc.constantFrom(...prefixes), (raw, prefix) => {
        const out = normalisePath(raw);
        if ('error' in out || !underPrefix(out.path, prefix)) return;
        const seen = lenientTarget(out.path);
        const bare = prefix.replace(/\/$/, '');
        expect(seen === bare || seen.startsWith(`${bare}/`) || prefix === '/', `${raw} -> ${out.path} -> ${seen}`).toBe(true);
      }),
      { numRuns: 5000 },
    );
  });
});
