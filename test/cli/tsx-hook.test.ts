import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/daemon.ts';

/**
 * scripts/tsx-hook.ts, the development hook that runs the `.tsx` Ink views
 * from source (bin/monctl preloads it for CLI commands): `.tsx` compiled with
 * React's automatic runtime, `.ts` left to Node, esbuild loaded only with the
 * first `.tsx`, and the compiled output reused from the cache until the file
 * changes. The files live under the repo's .tmp/ so that `react` resolves.
 */
let dir: string;
const cache = () => join(dir, 'cache');
const entries = () => readdirSync(join(cache(), 'monctl-tsx')).filter((f) => f.endsWith('.js'));

function run(main: string) {
  const r = spawnSync(
    join(ROOT, 'node_modules/.bin/node'),
    ['--disable-warning=ExperimentalWarning', '--import', join(ROOT, 'scripts/tsx-hook.ts'), join(dir, main)],
    {
      encoding: 'utf8',
      env: { ...process.env, NODE_COMPILE_CACHE: cache() },
    },
  );
  return { code: r.status, stderr: r.stderr, out: () => JSON.parse(r.stdout) };
}

const view = (label: string) => `const label: string = '${label}';\nexport const el = <b title={label}>{label}</b>;\n`;

beforeAll(() => {
  mkdirSync(join(ROOT, '.tmp'), { recursive: true });
  dir = mkdtempSync(join(ROOT, '.tmp', 'tsx-hook-'));
  writeFileSync(join(dir, 'view.tsx'), view('hi'));
  writeFileSync(join(dir, 'plain.ts'), 'export const x: number = 1;\n');
  writeFileSync(
    join(dir, 'main.ts'),
    `import { createRequire } from 'node:module';
const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((k) => k.endsWith('/node_modules/esbuild/lib/main.js'));
const { x } = await import('./plain.ts');
const before = loaded();
const { el } = await import('./view.tsx');
console.log(JSON.stringify({ x, before, after: loaded(), type: el.type, props: el.props }));
`,
  );
  // Node's type stripping refuses an enum; esbuild would compile it.
  writeFileSync(join(dir, 'enum.ts'), 'enum Colour { Red }\nconsole.log(Colour.Red);\n');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the .tsx development hook', () => {
  it('compiles .tsx with the automatic JSX runtime and loads esbuild only then', () => {
    const r = run('main.ts');
    expect(r.code, r.stderr).toBe(0);
    expect(r.out()).toEqual({ x: 1, before: false, after: true, type: 'b', props: { title: 'hi', children: 'hi' } });
    expect(entries()).toHaveLength(1);
  });

  it('leaves .ts files to Node (its type stripping refuses an enum)', () => {
    const r = run('enum.ts');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX');
  });

  it('reuses the compiled file from the cache until the source changes, keeping one entry per file', () => {
    const [entry] = entries();
    // What the cache holds is what runs: no compile when the source is unchanged.
    writeFileSync(join(cache(), 'monctl-tsx', entry), "export const el = { type: 'from the cache', props: {} };\n");
    expect(run('main.ts').out()).toMatchObject({ type: 'from the cache', after: false });
    writeFileSync(join(dir, 'view.tsx'), view('edited'));
    expect(run('main.ts').out()).toMatchObject({ type: 'b', props: { title: 'edited' }, after: true });
    expect(entries()).toHaveLength(1);
    expect(entries()[0]).not.toBe(entry);
  });
});
