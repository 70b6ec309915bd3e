import { describe, expect, it } from 'vitest';
import { runMonctl } from './run.ts';

describe('CLI papercuts (issue 25 item 8)', () => {
  it('a mistyped command prints the suggestion and a one-line hint, not the whole help, exit 2', async () => {
    const res = await runMonctl(['resorces', 'list']);
    expect(res.code).toBe(2);
    expect(res.stderr).toBe("error: unknown command 'resorces'\n(Did you mean resources?)\nRun 'monctl --help' for usage.\n");
    expect(res.stdout).toBe('');
  });
});
