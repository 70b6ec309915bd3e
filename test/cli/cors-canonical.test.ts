import { describe, expect, it } from 'vitest';
import { useAdminCli } from './run.ts';

const { monctl } = useAdminCli();

/** Walkthrough finding (issue 13): `cors add` printed the origin as typed, not as the daemon stored it. */
describe('monctl cors with a non-canonical origin', () => {
  it('add prints the canonical origin, list shows it, rm takes any spelling', async () => {
    const add = await monctl(['cors', 'add', 'HTTPS://Example.COM:443']);
    expect(add.code, add.stderr).toBe(0);
    expect(add.stdout).toBe('Allowed https://example.com.\n');
    const json = await monctl(['cors', 'add', 'HTTP://LocalHost:8080', '-o', 'json']);
    expect(json.json()).toEqual({ origin: 'http://localhost:8080', origins: ['http://localhost:8080', 'https://example.com'] });
    expect((await monctl(['cors', 'list'])).stdout).toBe('ORIGIN\nhttp://localhost:8080\nhttps://example.com\n');
    const slash = await monctl(['cors', 'add', 'https://example.org/']);
    expect(slash.code).toBe(1);
    expect(slash.stderr).toMatch(/origin: must not end with a slash: use https:\/\/example\.org/);
    expect((await monctl(['cors', 'rm', 'https://EXAMPLE.com:443/', '--yes'])).code).toBe(0);
    expect((await monctl(['cors', 'list'])).stdout).toBe('ORIGIN\nhttp://localhost:8080\n');
  });
});
