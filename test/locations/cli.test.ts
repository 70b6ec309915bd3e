import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { bearer, send } from '../helpers/http.ts';
import { runMonctl, useAdminCli } from '../cli/run.ts';

/**
 * Locations from the CLI (issue 19): `--location` and `--quorum` on resources
 * add|update, the detail and the history, `apply -f`, the 409 for deleting an
 * agent that is a location, and the agent's `--probe-concurrency`. The agent
 * slot is never connected: its checks read `unknown`, with the reason.
 */
const cli = useAdminCli();
const { monctl } = cli;
const file = (name: string, text: string) => {
  const path = join(cli.home.dir, name);
  writeFileSync(path, text);
  return path;
};

beforeAll(async () => {
  const res = await send(cli.d.url, 'POST', '/admin/api/agents', {
    headers: { ...bearer(cli.d.adminKey), 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'office' }),
  });
  expect(res.status).toBe(200);
});

describe('locations from the CLI', () => {
  it('resources add --location --quorum, the detail shows them and the latest result per location', async () => {
    const add = await monctl([
      'resources',
      'add',
      'intranet',
      '--target',
      'http://127.0.0.1:9/',
      '--interval',
      '3600',
      '--location',
      'office',
      '--location',
      'daemon',
      '--quorum',
      'any',
      '--inactive',
    ]);
    expect(add.code, add.stderr).toBe(0);
    const got = (await monctl(['resources', 'get', 'intranet', '-o', 'json'])).json();
    expect(got).toMatchObject({ locations: ['office', 'daemon'], quorum: 'any' });
    expect(
      got.locationResults.map((l: { location: string; status: string; message: string }) => [l.location, l.status, l.message]),
    ).toEqual([
      ['office', 'unknown', 'no check yet'],
      ['daemon', 'unknown', 'no check yet'],
    ]);

    const check = await monctl(['resources', 'check', 'intranet']);
    expect(check.code).toBe(5); // the daemon checked: NOT_AVAILABLE (port 9 refuses)
    expect(check.stdout).toMatch(/^LOCATION\tdaemon$/m);
    const table = await monctl(['resources', 'get', 'intranet']);
    expect(table.stdout).toMatch(/^LOCATIONS\toffice,daemon$/m);
    expect(table.stdout).toMatch(/^QUORUM\tany$/m);
    expect(table.stdout).toMatch(
      /^BY LOCATION\toffice: unknown \(agent office is not connected\); daemon: not_available \(connect ECONNREFUSED/m,
    );
    // any: the daemon's failure decides, though the office could not check.
    expect(table.stdout).toMatch(
      /^MESSAGE\tdown: down at 1 of 2 locations \(quorum any\); office: unknown \(agent office is not connected\); daemon: /m,
    );
    const history = await monctl(['resources', 'history', 'intranet']);
    expect(history.stdout.split('\n')[0].split('\t')).toEqual(['ID', 'CHECKED', 'STATUS', 'LOCATION', 'MS', 'ERROR', 'MESSAGE']);
    expect(
      history.stdout
        .split('\n')
        .filter(Boolean)
        .slice(1)
        .map((l) => l.split('\t')[3]),
    ).toEqual(['daemon']);

    const moved = await monctl(['resources', 'update', 'intranet', '--location', 'office', '-o', 'json']);
    expect(moved.json()).toMatchObject({ locations: ['office'], quorum: 'any', currentStatus: 'inactive' });
    const unchecked = await monctl(['resources', 'check', 'intranet']);
    expect(unchecked.code).toBe(1);
    expect(unchecked.stderr).toMatch(/No location could check resource \d+: agent office is not connected/);
  });

  it('refuses unknown locations and quorums, naming what is wrong', async () => {
    const where = await monctl(['resources', 'add', 'nowhere', '--target', 'http://127.0.0.1:9/', '--location', 'attic', '--inactive']);
    expect(where.code).toBe(1);
    expect(where.stderr).toMatch(/--location: no agent named or numbered "attic"/); // the flag (issue 25)
    const twice = await monctl([
      'resources',
      'add',
      'twice',
      '--target',
      'http://127.0.0.1:9/',
      '--location',
      'daemon',
      '--location',
      'daemon',
      '--inactive',
    ]);
    expect(twice.stderr).toMatch(/daemon is listed twice/);
    const quorum = await monctl(['resources', 'add', 'q', '--target', 'http://127.0.0.1:9/', '--quorum', 'most']);
    expect(quorum.code).toBe(2);
    expect(quorum.stderr).toMatch(/--quorum must be one of any, majority, all, not "most"/);
  });

  it('apply -f manages locations and quorum; an unknown agent changes nothing', async () => {
    const spec = (locations: string, quorum: string) =>
      file(
        'locations.yaml',
        `resources:
  - name: wiki
    type: HTTP
    target: http://127.0.0.1:9/wiki
    active: false
    locations: ${locations}
    quorum: ${quorum}
`,
      );
    expect((await monctl(['apply', '-f', spec('[office, daemon]', 'all')])).code).toBe(0);
    expect((await monctl(['resources', 'get', 'wiki', '-o', 'json'])).json()).toMatchObject({
      locations: ['office', 'daemon'],
      quorum: 'all',
    });
    expect((await monctl(['apply', '-f', spec('[office, daemon]', 'all')])).stdout).toMatch(/No changes/);
    const changed = await monctl(['apply', '-f', spec('[daemon]', 'majority')]);
    expect(changed.stdout).toMatch(/update resource wiki.*(locations.*quorum|quorum.*locations)/);
    expect((await monctl(['resources', 'get', 'wiki', '-o', 'json'])).json()).toMatchObject({ locations: ['daemon'], quorum: 'majority' });
    const bad = await monctl(['apply', '-f', spec('[attic]', 'any')]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/resources wiki: location "attic" is neither daemon nor an agent on the server/);
    expect((await monctl(['resources', 'get', 'wiki', '-o', 'json'])).json()).toMatchObject({ locations: ['daemon'], quorum: 'majority' });
    const badQuorum = await monctl(['apply', '-f', spec('[daemon]', 'most')]);
    expect(badQuorum.stderr).toMatch(/resources\[0\]\.quorum: must be any, majority or all/);
  });

  it('an agent that is a location is not deleted (409) until no resource is checked there', async () => {
    const rm = await monctl(['agents', 'rm', 'office', '-y']);
    expect(rm.code).toBe(1);
    expect(rm.stderr).toMatch(/Agent office is a check location of resources intranet: change their locations first/);
    expect((await monctl(['resources', 'update', 'intranet', '--location', 'daemon'])).code).toBe(0);
    expect((await monctl(['agents', 'rm', 'office', '-y'])).code).toBe(0);
  });

  it('monctl agent --probe-concurrency takes a whole number from 1', async () => {
    const res = await runMonctl(['agent', '--server', 'http://127.0.0.1:9', '--token-file', '/dev/null', '--probe-concurrency', '0']);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/--probe-concurrency must be a whole number from 1 to 1000/);
    const help = await runMonctl(['agent', '--help']);
    expect(help.stdout).toMatch(/--probe-concurrency <n>/);
    expect(help.stdout).not.toMatch(/--probe-protocol/);
  });
});
