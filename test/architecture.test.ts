import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/daemon.ts';

/** Every relative import specifier of a source file (static, dynamic, re-export). */
export function importsOf(source: string): string[] {
  const found: string[] = [];
  const pattern = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)['"]([^'"]+)['"]/g;
  for (const match of source.matchAll(pattern)) found.push(match[1]);
  return found;
}

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path));
    else if (/\.(ts|tsx|js|mjs)$/.test(name)) out.push(path);
  }
  return out;
}

/** Files under `from` that import anything under one of `forbidden` (top-level folders). */
export function violations(from: string, forbidden: string[], read = (f: string) => readFileSync(f, 'utf8'), files = filesUnder(join(ROOT, from))) {
  const bad: string[] = [];
  for (const file of files) {
    for (const spec of importsOf(read(file))) {
      if (!spec.startsWith('.')) continue;
      const target = relative(ROOT, resolve(dirname(file), spec));
      if (forbidden.some((top) => target === top || target.startsWith(`${top}/`))) bad.push(`${relative(ROOT, file)} -> ${spec}`);
    }
  }
  return bad;
}

describe('layering', () => {
  it('cli/ never imports daemon/ (it talks HTTP through src/)', () => {
    expect(violations('cli', ['daemon'])).toEqual([]);
  });

  it('src/ is shared by both sides and imports neither', () => {
    expect(violations('src', ['daemon', 'cli'])).toEqual([]);
  });

  it('the check sees every import form, so it can fail', () => {
    const file = join(ROOT, 'cli/fake/bad.ts');
    const sources = [
      "import { x } from '../../daemon/http/app.ts';",
      "export * from '../../daemon/store/store.ts';",
      "const m = await import('../../daemon/daemon.ts');",
      "import '../../daemon/logger.ts';",
    ];
    for (const source of sources) expect(violations('cli', ['daemon'], () => source, [file])).toHaveLength(1);
    expect(violations('cli', ['daemon'], () => "import { y } from '../../src/errors.ts';", [file])).toEqual([]);
  });
});
