import { readFileSync } from 'node:fs';

/** The package version, read once; both the daemon (pods, agents) and the CLI report it. */
export const VERSION: string = JSON.parse(
  readFileSync(new URL('../package.json', import.meta.url), 'utf8'),
).version;
