// Not `import from 'node:fs'`: its ESM facade costs the CLI's cold start ~6 ms of CPU.
const { readFileSync } = process.getBuiltinModule('node:fs');

/** The package version, read once; both the daemon (pods, agents) and the CLI report it. */
export const VERSION: string = JSON.parse(
  readFileSync(new URL('../package.json', import.meta.url), 'utf8'),
).version;
