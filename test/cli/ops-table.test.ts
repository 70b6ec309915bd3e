import { describe, expect, it } from 'vitest';
import { ops } from '../../cli/api/ops.ts';
import { operations } from '../../src/api/operations.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../helpers/daemon.ts';
import { CLI_OPS_FILE, renderCliOps } from '../../scripts/gen-cli-ops.ts';

describe('the CLI operation table', () => {
  it('is what scripts/gen-cli-ops.ts generates from src/api now (else: npm run gen:ops)', () => {
    expect(readFileSync(CLI_OPS_FILE, 'utf8')).toBe(renderCliOps());
    expect(Object.keys(ops).sort()).toEqual(Object.keys(operations).sort());
  });

  it('matches the API declarations (id, method, path)', () => {
    for (const [id, op] of Object.entries(ops)) {
      const real = operations[id as keyof typeof operations];
      expect(real, id).toBeDefined();
      expect({ id: op.id, method: op.method, path: op.path }).toEqual({ id: real.id, method: real.method, path: real.path });
    }
  });

  it('keeps the start path light: main and the runtime import no schema, Ink or undici at load', () => {
    for (const file of [
      'cli/main.ts',
      'cli/runtime.ts',
      'cli/api/client.ts',
      'cli/api/transport.ts',
      'cli/api/ops.ts',
      'cli/commands/resources.ts',
    ]) {
      const source = readFileSync(join(ROOT, file), 'utf8');
      const staticImports = [...source.matchAll(/^import (?!type )[^;]*from '([^']+)'/gm)].map((m) => m[1]);
      for (const spec of staticImports)
        expect(spec, `${file} -> ${spec}`).not.toMatch(/^(ink|react|yaml|undici|@sinclair\/typebox)$|operations\.ts$|schemas\//);
    }
  });
});
