import { describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { closedPort } from '../monitoring/helpers.ts';
import { useAdminCli } from './run.ts';

const cli = useAdminCli();

/** Header line and rows of tab-separated output (stdout is a pipe). */
const tsv = (text: string) =>
  text
    .trimEnd()
    .split('\n')
    .map((l) => l.split('\t'));
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;

/**
 * Walkthrough finding (issue 13): `monctl status` and `resources list` showed
 * `-` as the status for USER and anonymous callers, who list through the
 * public `/api/resources`. Run through the real CLI with each credential.
 */
describe('status for USER and anonymous callers', () => {
  it('resources list and status show STATUS and CHECKED from the public list', async () => {
    const admin = cli.d.admin;
    const up = await admin.call(operations.createResource, {
      body: { name: 'public-up', resourceType: 'HTTP', target: `${cli.d.url}/actuator/health`, intervalSeconds: 86400 },
    });
    const down = await admin.call(operations.createResource, {
      body: { name: 'public-down', resourceType: 'TCP', target: `127.0.0.1:${await closedPort()}`, intervalSeconds: 86400 },
    });
    await admin.call(operations.checkResource, { params: { id: up.id } });
    await admin.call(operations.checkResource, { params: { id: down.id } });
    const userKey = (await admin.call(operations.createApiKey, { body: { name: 'status-reader', role: 'USER' } })).token;

    for (const [who, env] of [
      ['USER', { MONCTL_API_KEY: userKey }],
      ['anonymous', { MONCTL_API_KEY: '' }],
    ] as const) {
      // `resources list` plain goes through the quick path, `-o wide` and `status` through commander.
      for (const args of [['resources', 'list'], ['resources', 'list', '-o', 'wide'], ['status']]) {
        const res = await cli.monctl(args, { env });
        expect(res.code, `${who} ${args.join(' ')}: ${res.stderr}`).toBe(0);
        const [head, ...rows] = tsv(res.stdout);
        const at = (name: string, column: string) => rows.find((r) => r[1] === name)?.[head.indexOf(column)];
        expect(at('public-up', 'STATUS'), `${who} ${args.join(' ')}`).toBe('available');
        expect(at('public-down', 'STATUS'), `${who} ${args.join(' ')}`).toBe('not_available');
        expect(at('public-up', 'CHECKED')).toMatch(DATE_TIME);
      }
      const json = await cli.monctl(['resources', 'list', '-o', 'json'], { env });
      expect(json.json().find((r: { id: number }) => r.id === up.id)).toMatchObject({
        currentStatus: 'available',
        latestCheckStatus: 'AVAILABLE',
        latestCheckedAt: expect.stringMatching(DATE_TIME),
      });
    }
    // The anonymous runs really were anonymous: an authenticated-only read is refused.
    expect((await cli.monctl(['resources', 'history', String(up.id)], { env: { MONCTL_API_KEY: '' } })).code).toBe(4);
  });
});
