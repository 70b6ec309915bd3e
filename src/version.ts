// Not `import from 'node:fs'`: its ESM facade costs the CLI's cold start ~6 ms of CPU.
const { readFileSync } = process.getBuiltinModule('node:fs');

/** Set by the bundler (scripts/bundle.ts): built code, the single executable above all, has no package.json to read. */
declare const MONCTL_BUILD_VERSION: string | undefined;

/** The package version, read once; both the daemon (pods, agents) and the CLI report it. */
export const VERSION: string =
  typeof MONCTL_BUILD_VERSION === 'string'
    ? MONCTL_BUILD_VERSION
    : JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;
