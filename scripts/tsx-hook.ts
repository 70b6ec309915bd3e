/**
 * Development only: lets Node run the Ink views (`cli/tui/*.tsx`) from
 * source. Node's type stripping reads `.ts` but not JSX, so this module hook
 * (preloaded by `bin/monctl` in a clone, `node --import ./scripts/tsx-hook.ts`
 * by hand) compiles `.tsx` files with esbuild, as `npm run build` does, and
 * leaves every other module to Node. esbuild, already the bundler, loads with
 * the first `.tsx` file: commands without a live view never load it, and pay
 * only for the hook's `endsWith` on each module they load (docs/DECISIONS.md, "CLI").
 * The built package (dist/) has no `.tsx` left and never loads this file.
 */
import type { LoadHookContext, LoadFnOutput } from 'node:module';

type Transform = typeof import('esbuild').transformSync;
let transform: Transform | undefined;

function compile(url: string): string {
  const { readFileSync } = process.getBuiltinModule('node:fs');
  const { fileURLToPath } = process.getBuiltinModule('node:url');
  const { createRequire } = process.getBuiltinModule('node:module');
  transform ??= (createRequire(import.meta.url)('esbuild') as typeof import('esbuild')).transformSync;
  const file = fileURLToPath(url);
  return transform(readFileSync(file, 'utf8'), {
    loader: 'tsx',
    // React's automatic runtime (react/jsx-runtime), as tsconfig's "jsx": "react-jsx" and the bundle.
    jsx: 'automatic',
    format: 'esm',
    target: 'esnext',
    // Imports stay as written, as Node's own type stripping leaves them (`import type` is the only kind removed).
    tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true } },
    // Stack traces name the .tsx lines under --enable-source-maps.
    sourcemap: 'inline',
    sourcefile: file,
  }).code;
}

process.getBuiltinModule('node:module').registerHooks({
  load(url: string, context: LoadHookContext, nextLoad: (url: string, context?: Partial<LoadHookContext>) => LoadFnOutput): LoadFnOutput {
    if (!url.endsWith('.tsx') || !url.startsWith('file:')) return nextLoad(url, context);
    return { format: 'module', source: compile(url), shortCircuit: true };
  },
});
