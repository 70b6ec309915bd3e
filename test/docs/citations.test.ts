import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/daemon.ts';

/**
 * Comments in the code cite documents that are in the repo: `docs/API.md#errors`, not an issue
 * number or a section of a contract that lives elsewhere (docs/ARCHITECTURE.md, issue 26 item 3).
 */

interface Comment {
  line: number;
  text: string;
}

/**
 * The comments of a TypeScript or JavaScript source, with the line each starts on. A small
 * lexer: strings, template literals (with nested `${}`) and regular expression literals are
 * skipped, so that `'// not a comment'` or `/\/\*x/` are not taken for comments.
 */
export function commentsOf(source: string): Comment[] {
  const out: Comment[] = [];
  const braces: Array<'code' | 'template'> = [];
  let i = 0;
  let line = 1;
  let prev = ''; // the last significant character outside comments, for the regex-or-division question
  const advance = (to: number) => {
    for (; i < to; i++) if (source[i] === '\n') line++;
  };
  const template = () => {
    // i is just past a backtick or the `}` closing `${`
    while (i < source.length) {
      const c = source[i];
      if (c === '\\') advance(i + 2);
      else if (c === '`') {
        advance(i + 1);
        prev = 'x';
        return;
      } else if (c === '$' && source[i + 1] === '{') {
        advance(i + 2);
        braces.push('template');
        prev = '{';
        return;
      } else advance(i + 1);
    }
  };
  while (i < source.length) {
    const c = source[i];
    const next = source[i + 1];
    if (c === '/' && next === '/') {
      const end = source.indexOf('\n', i);
      const stop = end < 0 ? source.length : end;
      out.push({ line, text: source.slice(i, stop) });
      advance(stop);
    } else if (c === '/' && next === '*') {
      const end = source.indexOf('*/', i + 2);
      const stop = end < 0 ? source.length : end + 2;
      out.push({ line, text: source.slice(i, stop) });
      advance(stop);
    } else if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < source.length && source[j] !== c && source[j] !== '\n') j += source[j] === '\\' ? 2 : 1;
      advance(j + 1);
      prev = c;
    } else if (c === '`') {
      advance(i + 1);
      template();
    } else if (
      c === '/' &&
      (prev === '' ||
        /[(,=:[!&|?{};+\-*%<>~^]/.test(prev) ||
        /\b(return|typeof|case|in|of|delete|void|throw|new|yield|await)$/.test(source.slice(Math.max(0, i - 8), i).trimEnd()))
    ) {
      let j = i + 1;
      let inClass = false;
      while (j < source.length && source[j] !== '\n' && (inClass || source[j] !== '/')) {
        if (source[j] === '\\') j++;
        else if (source[j] === '[') inClass = true;
        else if (source[j] === ']') inClass = false;
        j++;
      }
      advance(j + 1);
      prev = 'x';
    } else {
      if (c === '{') braces.push('code');
      if (c === '}' && braces.pop() === 'template') {
        advance(i + 1);
        template();
        continue;
      }
      if (!/\s/.test(c)) prev = /[\w$)\]]/.test(c) ? 'x' : c;
      advance(i + 1);
    }
  }
  return out;
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, each space a hyphen. */
export function slugOf(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a Markdown document's headings (outside code fences), duplicates numbered as GitHub does. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | undefined;
  for (const line of markdown.split('\n')) {
    const f = /^\s*(`{3,}|~{3,})/.exec(line);
    if (f && !fence) fence = f[1][0];
    else if (f && fence === f[1][0]) fence = undefined;
    if (fence || f) continue;
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!h) continue;
    const slug = slugOf(h[1]);
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n ? `${slug}-${n}` : slug);
  }
  return anchors;
}

const OLD_CITATION = /\bissue \d|\bCONTRACT\b/;
const DOC_CITATION = /\b((?:docs\/)?[\w.-]+\.md)(?:#([\w-]+))?/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.(ts|tsx|js|mjs)$/.test(f))
    .map((f) => join(ROOT, dir, f));
}

/** `file:line: comment line` for each comment line that cites an issue number or the old contract. */
export function oldCitations(file: string, source: string): string[] {
  const bad: string[] = [];
  for (const c of commentsOf(source)) {
    c.text.split('\n').forEach((text, k) => {
      if (OLD_CITATION.test(text)) bad.push(`${relative(ROOT, file)}:${c.line + k}: ${text.trim()}`);
    });
  }
  return bad;
}

/** Citations of a Markdown file (and anchor) that does not exist in the repo. */
export function brokenCitations(file: string, source: string, read = (doc: string) => readFileSync(join(ROOT, doc), 'utf8')): string[] {
  const bad: string[] = [];
  const anchors = new Map<string, Set<string>>();
  for (const c of commentsOf(source)) {
    for (const [cited, doc, anchor] of c.text.matchAll(DOC_CITATION)) {
      if (!doc.startsWith('docs/') && doc !== 'README.md') continue;
      const where = `${relative(ROOT, file)}:${c.line}: ${cited}`;
      if (!existsSync(join(ROOT, doc))) {
        bad.push(`${where} (no such file)`);
        continue;
      }
      if (!anchor) continue;
      if (!anchors.has(doc)) anchors.set(doc, anchorsOf(read(doc)));
      if (!anchors.get(doc)!.has(anchor)) bad.push(`${where} (no such heading)`);
    }
  }
  return bad;
}

/** Markdown links from `file` to a repo file or heading that does not exist (web links are not followed). */
export function brokenLinks(file: string, markdown: string, read = (doc: string) => readFileSync(join(ROOT, doc), 'utf8')): string[] {
  const bad: string[] = [];
  for (const [, link] of markdown.matchAll(/\]\(([^)\s]*)\)/g)) {
    const [path, anchor] = link.split('#');
    if (/^[a-z]+:/.test(path)) continue;
    const target = path ? normalize(join(dirname(file), path)) : file;
    if (path && !existsSync(join(ROOT, target))) bad.push(`${file}: ${link} (no such file)`);
    else if (anchor && target.endsWith('.md') && !anchorsOf(read(target)).has(anchor)) bad.push(`${file}: ${link} (no such heading)`);
  }
  return bad;
}

const FILES = ['daemon', 'cli', 'src'].flatMap(sourceFiles);
const DOCS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.md'))
    .map((f) => join('docs', f)),
];

describe('citations in code comments', () => {
  it('no comment in daemon/, cli/ or src/ cites an issue number or CONTRACT: they cite docs/ or say the reason', () => {
    expect(FILES.length).toBeGreaterThan(300);
    expect(FILES.flatMap((f) => oldCitations(f, readFileSync(f, 'utf8')))).toEqual([]);
  });

  it('every docs/X.md#anchor (and README.md#anchor) cited in a comment is a heading of that file', () => {
    const cited = FILES.filter((f) => /(docs\/[\w.-]+|README)\.md#/.test(readFileSync(f, 'utf8')));
    expect(cited.length).toBeGreaterThan(20);
    expect(FILES.flatMap((f) => brokenCitations(f, readFileSync(f, 'utf8')))).toEqual([]);
  });

  it('links between README.md and docs/ point at files and headings that exist', () => {
    expect(DOCS.flatMap((f) => brokenLinks(f, readFileSync(join(ROOT, f), 'utf8')))).toEqual([]);
    const read = () => '## Errors\n';
    expect(brokenLinks('docs/X.md', '[a](API.md#errors) [b](#errors) [c](https://example.com/#x)', read)).toEqual([]);
    expect(brokenLinks('docs/X.md', '[a](API.md#nope) [b](NOPE.md)', read)).toEqual([
      'docs/X.md: API.md#nope (no such heading)',
      'docs/X.md: NOPE.md (no such file)',
    ]);
  });

  it('the lexer finds comments, and only comments', () => {
    const source = [
      "const a = '// not a comment'; // one",
      'const b = `x ${`/* nested ${c} */`} y`; /* two',
      '   still two */',
      "const r = /\\/\\*[/]*/g.test(s) ? 1 / 2 / 3 : '\\'';",
      'if (x) { /** three */ }',
      "const t = `n${/'/.test(v)}`; // four",
    ].join('\n');
    expect(commentsOf(source)).toEqual([
      { line: 1, text: '// one' },
      { line: 2, text: '/* two\n   still two */' },
      { line: 5, text: '/** three */' },
      { line: 6, text: '// four' },
    ]);
  });

  it('fails on a planted citation of an issue or the contract, not on the same words in a string', () => {
    const file = join(ROOT, 'daemon/fake.ts');
    expect(oldCitations(file, '/**\n * Shed slow readers (issue 14).\n */\nconst x = 1;')).toEqual([
      'daemon/fake.ts:2: * Shed slow readers (issue 14).',
    ]);
    expect(oldCitations(file, '// CONTRACT §4: visibility')).toHaveLength(1);
    expect(oldCitations(file, "const msg = 'see issue 14';")).toEqual([]);
  });

  it('fails on a cited anchor or file that does not exist', () => {
    const file = join(ROOT, 'src/fake.ts');
    const doc = '# API\n## Errors\n```md\n## Not a heading\n```\n## Errors\n## First start, logging in: the `API` explorer\n';
    const read = () => doc;
    expect(brokenCitations(file, '// docs/API.md#errors, docs/API.md#errors-1', read)).toEqual([]);
    expect(brokenCitations(file, '// docs/API.md#first-start-logging-in-the-api-explorer', read)).toEqual([]);
    expect(brokenCitations(file, '// docs/API.md#not-a-heading', read)).toEqual([
      'src/fake.ts:1: docs/API.md#not-a-heading (no such heading)',
    ]);
    expect(brokenCitations(file, '/** see docs/NOPE.md */', read)).toEqual(['src/fake.ts:1: docs/NOPE.md (no such file)']);
  });
});
