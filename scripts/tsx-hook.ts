/**
 * Development only: lets Node run the Ink views (`cli/tui/*.tsx`) from
 * source. Node's type stripping reads `.ts` but not JSX, so this module hook
 * (preloaded by `bin/monctl` in a clone; by hand, `node --import
 * ./scripts/tsx-hook.ts`) compiles `.tsx` files with esbuild, as `npm run
 * build` does, and leaves every other module to Node. Commands without a live
 * view never load esbuild: they pay only this module and an `endsWith` per
 * module they load (docs/DECISIONS.md, "CLI"). The built package (dist/) has
 * no `.tsx` left and never loads this file.
 */
import type { LoadFnOutput, LoadHookContext } from 'node:module';
import type { TransformOptions } from 'esbuild';

const OPTIONS: TransformOptions = {
  loader: 'tsx',
  // React's automatic runtime (react/jsx-runtime), as tsconfig's "jsx": "react-jsx" and the bundle.
  jsx: 'automatic',
  format: 'esm',
  target: 'esnext',
  // Imports stay as written, as Node's own type stripping leaves them (`import type` is the only kind removed).
  tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true } },
  // Stack traces name the .tsx lines under --enable-source-maps.
  sourcemap: 'inline',
};

/**
 * The JavaScript for one `.tsx` file. Starting esbuild (a worker thread and
 * its service process) costs more than loading Ink, so the output is kept
 * beside V8's code cache (`NODE_COMPILE_CACHE`, which `bin/monctl` always
 * sets), named by hashes of the file's path and of its source, the options
 * and esbuild's version, one entry per file (an edit replaces it). Once
 * compiled, a view starts about as fast as the `.ts` views did.
 */
function compile(url: string): string {
  const fs = process.getBuiltinModule('node:fs');
  const { join } = process.getBuiltinModule('node:path');
  const file = process.getBuiltinModule('node:url').fileURLToPath(url);
  const source = fs.readFileSync(file, 'utf8');
  const require = process.getBuiltinModule('node:module').createRequire(import.meta.url);
  const esbuildVersion = (require('esbuild/package.json') as { version: string }).version;
  const { hash } = process.getBuiltinModule('node:crypto');
  const prefix = hash('sha256', file).slice(0, 16);
  const name = `${prefix}-${hash('sha256', [esbuildVersion, JSON.stringify(OPTIONS), source].join('\0')).slice(0, 32)}.js`;
  const dir = process.env.NODE_COMPILE_CACHE && join(process.env.NODE_COMPILE_CACHE, 'monctl-tsx');
  const cached = dir && join(dir, name);
  try {
    if (cached) return fs.readFileSync(cached, 'utf8');
  } catch {
    // not compiled yet
  }
  const { code } = (require('esbuild') as typeof import('esbuild')).transformSync(source, { ...OPTIONS, sourcefile: file });
  if (dir && cached) {
    try {
      fs.mkdirSync(dir, { recursive: true });
      // Renamed into place: two commands starting at once never read half a file.
      const partial = `${cached}.${process.pid}`;
      fs.writeFileSync(partial, code);
      fs.renameSync(partial, cached);
      for (const old of fs.readdirSync(dir))
        if (old.startsWith(`${prefix}-`) && old.endsWith('.js') && old !== name) fs.rmSync(join(dir, old), { force: true });
    } catch {
      // A cache that cannot be written (read-only home) only costs the next start a compile.
    }
  }
  return code;
}

process.getBuiltinModule('node:module').registerHooks({
  load(url: string, context: LoadHookContext, nextLoad: (url: string, context?: Partial<LoadHookContext>) => LoadFnOutput): LoadFnOutput {
    if (!url.endsWith('.tsx') || !url.startsWith('file:')) return nextLoad(url, context);
    return { format: 'module', source: compile(url), shortCircuit: true };
  },
});
