import { expect } from 'vitest';
import type { AdminCli } from './run.ts';

/** `monctl … -o json` as the daemon's ADMIN, asserting exit 0. */
export const jsonOf = (cli: AdminCli) => async (args: string[]) => {
  const r = await cli.monctl([...args, '-o', 'json']);
  expect(r.code, r.stderr).toBe(0);
  return r.json();
};

/** The variables a report's `set NAME: …` lines name, in order. */
export const reportVariables = (report: string[]): string[] =>
  report.filter((l) => l.startsWith('set ')).map((l) => l.slice(4, l.indexOf(':')));
