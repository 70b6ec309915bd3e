import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useAdminCli } from './run.ts';

const cli = useAdminCli();
const { monctl } = cli;

const file = (name: string, text: string) => {
  const path = join(cli.home.dir, name);
  writeFileSync(path, text);
  return path;
};

const V1 = `
groups:
  - name: public-sites
    visibility: PUBLIC
  - name: internal
    visibility: AUTHENTICATED
resources:
  - name: api
    type: HTTP
    target: http://127.0.0.1:9/health
    intervalSeconds: 300
    groups: [public-sites]
    active: false
  - name: db
    type: TCP
    target: 127.0.0.1:9
    groups: [internal]
    active: false
announcements:
  - name: maintenance
    kind: WARNING
    content: <p>Maintenance on Sunday</p>
    active: true
`;

const state = async () => ({
  groups: (await monctl(['groups', 'list', '-o', 'json'])).json(),
  resources: (await monctl(['resources', 'list', '-o', 'json'])).json(),
  announcements: (await monctl(['announcements', 'list', '-o', 'json'])).json(),
});

describe('monctl apply', () => {
  it('rejects an invalid file with every problem listed, changing nothing', async () => {
    const bad = file(
      'bad.yaml',
      `
groups:
  - name: g
    visibility: SECRET
resources:
  - name: x
    type: HTTP
    target: not-a-url
    intervalSeconds: 5
    colour: red
  - name: x
    type: TCP
    target: 127.0.0.1:9
    groups: [nowhere]
`,
    );
    const res = await monctl(['apply', '-f', bad]);
    expect(res.code).toBe(2); // an invalid file is a usage error (issue 25)
    expect(res.stderr).toMatch(/nothing was changed/);
    for (const field of [
      'groups\\[0\\]\\.visibility',
      'resources\\[0\\]\\.target',
      'resources\\[0\\]\\.intervalSeconds',
      'resources\\[0\\]\\.colour',
      'resources\\[1\\]\\.name',
    ]) {
      expect(res.stderr).toMatch(new RegExp(`^ {2}${field}: `, 'm'));
    }
    const unknownGroup = await monctl([
      'apply',
      '-f',
      file('ref.yaml', 'resources:\n  - {name: y, type: TCP, target: "127.0.0.1:9", groups: [nowhere]}\n'),
    ]);
    expect(unknownGroup.code).toBe(1);
    expect(unknownGroup.stderr).toMatch(/group "nowhere"/);
    const syntax = await monctl(['apply', '-f', file('syntax.json', '{"resources": [')]);
    expect(syntax.code).toBe(2);
    expect(syntax.stderr).toMatch(/invalid JSON/);
    expect(await state()).toEqual({ groups: [], resources: [], announcements: [] });
  });

  it('dry-run prints the plan and changes nothing', async () => {
    const res = await monctl(['apply', '-f', file('v1.yaml', V1), '--dry-run']);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^\+ create group public-sites$/m);
    expect(res.stdout).toMatch(/^\+ create resource api$/m);
    expect(res.stdout).toMatch(/^\+ create announcement maintenance$/m);
    expect(res.stdout).toMatch(/Plan: 5 to create, 0 to update, 0 to delete \(dry run/);
    expect(await state()).toEqual({ groups: [], resources: [], announcements: [] });
  });

  it('creates everything, then a second run changes nothing', async () => {
    const path = file('v1.yaml', V1);
    const first = await monctl(['apply', '-f', path]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/Applied: 5 created, 0 updated, 0 deleted/);
    const s = await state();
    expect(s.groups.map((g: { name: string }) => g.name).sort()).toEqual(['internal', 'public-sites']);
    expect(s.resources).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          name: 'api',
          resourceType: 'HTTP',
          intervalSeconds: 300,
          groups: [expect.objectContaining({ name: 'public-sites' })],
        }),
        expect.objectContaining({ name: 'db', resourceType: 'TCP', groups: [expect.objectContaining({ name: 'internal' })] }),
      ]),
    );
    expect(s.announcements).toEqual([
      expect.objectContaining({ kind: 'WARNING', content: expect.stringContaining('Maintenance on Sunday') }),
    ]);
    const second = await monctl(['apply', '-f', path]);
    expect(second.code).toBe(0);
    expect(second.stdout).toBe('No changes: the daemon already matches the file.\n');
    const json = await monctl(['apply', '-f', path, '-o', 'json']);
    expect(json.json()).toEqual({ dryRun: false, changes: [] });
  });

  it('updates what differs (JSON file too)', async () => {
    const v2 = {
      groups: [
        { name: 'public-sites', visibility: 'PUBLIC' },
        { name: 'internal', visibility: 'HIDDEN' },
      ],
      resources: [
        {
          name: 'api',
          type: 'HTTP',
          target: 'http://127.0.0.1:9/healthz',
          intervalSeconds: 300,
          groups: ['public-sites', 'internal'],
          active: false,
        },
        { name: 'db', type: 'TCP', target: '127.0.0.1:9', groups: ['internal'], active: false },
      ],
      announcements: [{ name: 'maintenance', kind: 'PROBLEM', content: '<p>Maintenance moved to Monday</p>', active: true }],
    };
    const path = file('v2.json', JSON.stringify(v2));
    const res = await monctl(['apply', '-f', path]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^~ update group internal \(visibility\)$/m);
    expect(res.stdout).toMatch(/^~ update resource api \(target, groups\)$/m);
    expect(res.stdout).toMatch(/^~ update announcement maintenance \(kind, content\)$/m);
    expect(res.stdout).not.toMatch(/resource db/);
    const s = await state();
    expect(s.resources.find((r: { name: string }) => r.name === 'api')).toMatchObject({
      target: 'http://127.0.0.1:9/healthz',
      groups: [{ name: 'public-sites' }, { name: 'internal' }],
    });
    expect(s.announcements).toHaveLength(1);
    expect(s.announcements[0]).toMatchObject({ kind: 'PROBLEM', content: expect.stringContaining('Monday') });
    expect((await monctl(['apply', '-f', path])).stdout).toMatch(/No changes/);
  });

  it('prunes what the file no longer names, only with --prune', async () => {
    // An announcement made by hand is not apply's to prune.
    expect((await monctl(['announcements', 'add'], { input: '<p>by hand</p>' })).code).toBe(0);
    const v3 = file(
      'v3.yaml',
      `
groups:
  - name: public-sites
resources:
  - name: api
    type: HTTP
    target: http://127.0.0.1:9/healthz
    groups: [public-sites]
`,
    );
    const without = await monctl(['apply', '-f', v3]);
    expect(without.stdout).toMatch(/update resource api \(groups\)/);
    expect(without.stdout).not.toMatch(/^- delete/m);
    const plan = await monctl(['apply', '-f', v3, '--prune', '--dry-run', '-o', 'json']);
    expect(plan.json().changes).toEqual(
      expect.arrayContaining([
        { action: 'delete', kind: 'resource', name: 'db' },
        { action: 'delete', kind: 'group', name: 'internal' },
        { action: 'delete', kind: 'announcement', name: 'maintenance' },
      ]),
    );
    const res = await monctl(['apply', '-f', v3, '--prune', '--yes']);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/Applied: 0 created, 0 updated, 3 deleted/);
    const s = await state();
    expect(s.resources.map((r: { name: string }) => r.name)).toEqual(['api']);
    expect(s.groups.map((g: { name: string }) => g.name)).toEqual(['public-sites']);
    expect(s.announcements).toEqual([expect.objectContaining({ content: '<p>by hand</p>' })]);
    expect((await monctl(['apply', '-f', v3, '--prune'])).stdout).toMatch(/No changes/);
  });
});
