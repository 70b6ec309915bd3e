import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/daemon.ts';

/** Biome's own launcher (what `npx biome` runs), on the Node running the tests. */
const BIOME = join(ROOT, 'node_modules/@biomejs/biome/bin/biome');
const biome = (args: string[], cwd = ROOT) =>
  spawnSync(process.execPath, [BIOME, ...args], { cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });

/**
 * The house style is Biome's (biome.json): `npm run format` rewrites the tree, and this is the
 * check CI runs, formatting and lint together, so a change that skipped the formatter fails here
 * with the files and lines it would change.
 */
describe('house style', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'monctl-style-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('the tree is formatted and lint-clean (biome ci)', () => {
    const run = biome(['ci', '--max-diagnostics=50', '.']);
    expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
  }, 60_000);

  it('the check fails on a file that is not formatted, and on a lint error', () => {
    copyFileSync(join(ROOT, 'biome.json'), join(scratch, 'biome.json'));
    writeFileSync(join(scratch, 'ugly.ts'), 'export const x = {a:1,\n  b:"two"}\n');
    const unformatted = biome(['ci', '--vcs-enabled=false', '.'], scratch);
    expect(unformatted.status).not.toBe(0);
    expect(unformatted.stdout + unformatted.stderr).toMatch(/ugly\.ts.*format/);

    writeFileSync(join(scratch, 'ugly.ts'), "const escape = (s: string) => s;\nexport const y = escape('a');\n");
    const lint = biome(['ci', '--vcs-enabled=false', '.'], scratch);
    expect(lint.status).not.toBe(0);
    expect(lint.stdout + lint.stderr).toMatch(/noShadowRestrictedNames/);
  }, 60_000);
});
