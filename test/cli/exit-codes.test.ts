import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/errors.ts';
import { ROOT } from '../helpers/daemon.ts';

/**
 * Exit codes are named (`ExitCode.usage`), never written as numbers: scripts
 * depend on them, so each has one declaration in src/errors.ts and one row in
 * the README's table.
 */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.tsx?$/.test(e.name))
    .map((e) => join(e.parentPath, e.name));
}

/**
 * The code with the text of strings, templates and comments blanked out
 * (lengths kept, `${…}` kept as code), so that brackets and commas in it are
 * the code's own.
 */
function codeOnly(text: string): string {
  const out = [...text];
  const templates: number[] = []; // brace depth at each open `${`
  let depth = 0;
  let i = 0;
  const blank = (from: number, to: number) => out.fill(' ', from, to);
  const skipString = (quote: string) => {
    const from = ++i;
    while (i < text.length && text[i] !== quote && text[i] !== '\n') i += text[i] === '\\' ? 2 : 1;
    blank(from, i++);
  };
  const skipTemplateText = () => {
    const from = i;
    while (i < text.length && text[i] !== '`' && !(text[i] === '$' && text[i + 1] === '{')) i += text[i] === '\\' ? 2 : 1;
    blank(from, i);
    if (text[i] === '`') i++;
    else {
      templates.push(depth++);
      i += 2;
    }
  };
  while (i < text.length) {
    const c = text[i];
    if (c === '/' && text[i + 1] === '/') {
      const end = text.indexOf('\n', i);
      blank(i, end < 0 ? text.length : end);
      i = end < 0 ? text.length : end;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i) + 2;
      blank(i, end);
      i = end;
    } else if (c === "'" || c === '"') skipString(c);
    else if (c === '`') {
      i++;
      skipTemplateText();
    } else if (c === '{') {
      depth++;
      i++;
    } else if (c === '}') {
      depth--;
      i++;
      if (templates.at(-1) === depth) {
        templates.pop();
        skipTemplateText();
      }
    } else i++;
  }
  return out.join('');
}

/** The top-level arguments of the call whose `(` is at `open`. */
function argumentsAt(code: string, open: number): string[] {
  const args: string[] = [];
  let depth = 0;
  let from = open + 1;
  for (let i = open; i < code.length; i++) {
    if ('([{'.includes(code[i])) depth++;
    else if (')]}'.includes(code[i]) && --depth === 0) return [...args, code.slice(from, i)];
    else if (code[i] === ',' && depth === 1) {
      args.push(code.slice(from, i));
      from = i + 1;
    }
  }
  return args;
}

/** A number, or a choice between numbers (`c ? 0 : 2`); not `128 + n`, a signal's exit status as shells give it. */
const literal = (arg: string | undefined) =>
  arg !== undefined && !/^\s*128\s*\+/.test(arg) && /^\s*\d+\s*$|\?\s*\d+\s*:|:\s*\d+\s*$/.test(arg);

/** Where an exit code goes: `process.exit(…)`, the third argument of `new MonctlError(…)`, `….exitCode = …`. */
function literalExitCodes(text: string): number[] {
  const code = codeOnly(text);
  const at: number[] = [];
  for (const m of code.matchAll(/\bprocess\.exit\(|\bnew MonctlError\(|\bexitCode\s*=(?!=)([^;\n]*)/g)) {
    // `exitCode = …` up to the end of the statement; a call's first argument, or MonctlError's third.
    const arg = m[1] ?? argumentsAt(code, m.index + m[0].length - 1)[m[0].startsWith('new') ? 2 : 0];
    if (literal(arg)) at.push(m.index);
  }
  return at;
}

describe('exit codes', () => {
  it('are named in bin/, cli/, daemon/ and src/', () => {
    const found: string[] = [];
    for (const file of ['bin', 'cli', 'daemon', 'src'].flatMap((d) => sources(join(ROOT, d)))) {
      const text = readFileSync(file, 'utf8');
      for (const index of literalExitCodes(text)) {
        const line = text.slice(0, index).split('\n').length;
        found.push(`${relative(ROOT, file)}:${line}: ${text.slice(index).split('\n')[0]}`);
      }
    }
    expect(found).toEqual([]);
  });

  it('finds a number wherever it stands in the call', () => {
    const calls = [
      'process.exit(2);',
      'process.exit(err.exitCode === 0 ? 0 : 2);',
      'process.exitCode = 1;',
      "throw new MonctlError('usage', `a (${b.join(', ')}); c`\n  + 'd, e', 2);",
      "new MonctlError('io', 'x', 1, { cause });",
    ];
    for (const call of calls) expect(literalExitCodes(call), call).toHaveLength(1);
    const named = [
      'process.exit(ExitCode.usage);',
      'process.exit(128 + (signal === 15 ? 15 : 1));',
      "new MonctlError('x', `y ${f(1, 2)}`, ExitCode.usage);",
      'if (exitCode === 0) x();',
    ];
    for (const call of named) expect(literalExitCodes(call), call).toEqual([]);
  });

  it('are the table of the README (The CLI)', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const rows = [...readme.matchAll(/^\| (\d+) \| `(\w+)` \|/gm)].map((m) => [m[2], Number(m[1])]);
    expect(Object.fromEntries(rows)).toEqual(ExitCode);
  });
});
