import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useAdminCli } from '../cli/run.ts';

const cli = useAdminCli();
const { monctl } = cli;

/** `monctl status-pages …` and `statusPages` in `monctl apply -f`. */
describe('monctl status-pages', () => {
  it('add, list, get, update and rm, by id or slug', { timeout: 90_000 }, async () => {
    expect((await monctl(['groups', 'add', 'Website'])).code).toBe(0);
    expect((await monctl(['groups', 'add', 'Staff', '--visibility', 'AUTHENTICATED'])).code).toBe(0);
    const add = await monctl([
      'status-pages',
      'add',
      'main',
      '--title',
      'Example status',
      '--group',
      'Website',
      '--group',
      'Staff',
      '--hostname',
      'status.example.com',
      '--no-incidents',
      '--https-redirect',
    ]);
    expect(add.code, add.stderr).toBe(0);
    expect(add.stdout).toBe('Created status page main (id 1): /status/main and http://status.example.com/ on the edge.\n');

    const list = await monctl(['status-pages', 'list']);
    expect(list.stdout.split('\n')[0].split('\t')).toEqual(['ID', 'SLUG', 'TITLE', 'PATH', 'GROUPS', 'HOSTNAME']);
    expect(list.stdout.split('\n')[1].split('\t')).toEqual([
      '1',
      'main',
      'Example status',
      '/status/main',
      'Website,Staff',
      'status.example.com',
    ]);
    const got = (await monctl(['status-pages', 'get', 'main', '-o', 'json'])).json();
    expect(got).toMatchObject({
      slug: 'main',
      showIncidents: false,
      showAnnouncements: true,
      customHostname: 'status.example.com',
      httpsRedirect: true,
    });

    const update = await monctl([
      'sp',
      'update',
      'main',
      '--no-hostname',
      '--no-groups',
      '--incidents',
      '--footer',
      'ops@example.com',
      '--slug',
      'public',
      '--no-https-redirect',
      '--error-details',
    ]);
    expect(update.code, update.stderr).toBe(0);
    expect((await monctl(['status-pages', 'get', '1', '-o', 'json'])).json()).toMatchObject({
      slug: 'public',
      groupIds: [],
      customHostname: null,
      showIncidents: true,
      footer: 'ops@example.com',
      httpsRedirect: false,
      showErrorDetails: true,
    });
    expect((await monctl(['sp', 'update', 'public', '--no-error-details'])).code).toBe(0);
    expect((await monctl(['status-pages', 'get', 'public', '-o', 'json'])).json()).toMatchObject({ showErrorDetails: false });

    const usage = await monctl(['status-pages', 'update', 'public']);
    expect([usage.code, usage.stderr]).toEqual([2, 'error: nothing to update: give at least one option (see --help)\n']);
    const missing = await monctl(['status-pages', 'get', 'nope']);
    expect(missing.code).toBe(3);
    const bad = await monctl(['status-pages', 'add', 'Bad Slug', '--title', 'x']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/slug/);
    const taken = await monctl(['status-pages', 'add', 'public', '--title', 'x']);
    expect([taken.code, taken.stderr]).toEqual([1, 'error: A status page with slug public exists\n']);

    expect((await monctl(['status-pages', 'rm', 'public'])).code).toBe(2); // not a TTY: --yes needed
    const rm = await monctl(['status-pages', 'rm', 'public', '--yes']);
    expect([rm.code, rm.stdout]).toEqual([0, 'Deleted status page public.\n']);
    expect((await monctl(['status-pages', 'list', '-o', 'json'])).json()).toEqual([]);
  });

  it('apply -f manages status pages by slug, naming groups, and prunes them with --prune', { timeout: 90_000 }, async () => {
    const path = join(cli.home.dir, 'pages.yaml');
    writeFileSync(
      path,
      `
groups:
  - name: Website
  - name: Staff
    visibility: AUTHENTICATED
statusPages:
  - slug: status
    title: Our status
    description: Everything we run
    groups: [Website, Staff]
    showAnnouncements: false
    showErrorDetails: true
    customHostname: status.example.net
    httpsRedirect: true
`,
    );
    const first = await monctl(['apply', '-f', path]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^\+ create status page status$/m);
    const page = (await monctl(['status-pages', 'get', 'status', '-o', 'json'])).json();
    expect(page).toMatchObject({
      title: 'Our status',
      description: 'Everything we run',
      showAnnouncements: false,
      showErrorDetails: true,
      customHostname: 'status.example.net',
      httpsRedirect: true,
    });
    expect((await monctl(['apply', '-f', path])).stdout).toBe('No changes: the daemon already matches the file.\n');

    writeFileSync(
      path,
      `
statusPages:
  - slug: status
    title: Our status
    groups: [Staff]
    customHostname: null
`,
    );
    const second = await monctl(['apply', '-f', path]);
    expect(second.stdout).toMatch(/^~ update status page status \(customHostname, groups\)$/m);
    expect((await monctl(['status-pages', 'get', 'status', '-o', 'json'])).json()).toMatchObject({
      customHostname: null,
      description: 'Everything we run',
    });

    writeFileSync(path, 'statusPages:\n  - slug: Bad\n    title: x\n    groups: [Nope]\n    colour: red\n');
    const invalid = await monctl(['apply', '-f', path]);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toMatch(/statusPages\[0\]\.slug: must be/);
    expect(invalid.stderr).toMatch(/statusPages\[0\]\.colour: unknown field/);

    writeFileSync(path, 'groups:\n  - name: Website\n  - name: Staff\n');
    const pruned = await monctl(['apply', '-f', path, '--prune', '--yes']);
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(pruned.stdout).toMatch(/^- delete status page status$/m);
    expect((await monctl(['status-pages', 'list', '-o', 'json'])).json()).toEqual([]);
  });
});
