import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { type Target, target } from '../alerts/helpers.ts';
import { adminRunner, type RunResult, tempHome } from './run.ts';

/** Header line and rows of tab-separated output (stdout is a pipe). */
const tsv = (text: string) =>
  text
    .trimEnd()
    .split('\n')
    .map((l) => l.split('\t'));

/** `monctl status-pages incident open|update|resolve|list|get|promote|rm` against a real daemon. */
describe('posted incidents in the CLI', () => {
  let d: TestDaemon;
  let t: Target;
  let home: ReturnType<typeof tempHome>;
  let monctl: (args: string[], opts?: { input?: string }) => Promise<RunResult>;

  beforeAll(async () => {
    [d, t] = await Promise.all([startDaemon({ args: ['--scheduler', 'off'] }), target()]);
    home = tempHome();
    monctl = adminRunner(d, home.dir);
    await ok(['groups', 'add', 'Website', '--visibility', 'PUBLIC']);
    await ok(['groups', 'add', 'Elsewhere', '--visibility', 'PUBLIC']);
    await ok(['resources', 'add', 'web', '--target', t.url, '--group', 'Website', '--failure-threshold', '1']);
    await ok(['resources', 'add', 'api', '--target', t.url, '--group', 'Website']);
    await ok(['resources', 'add', 'other', '--target', t.url, '--group', 'Elsewhere']);
    await ok(['status-pages', 'add', 'main', '--title', 'Main', '--group', 'Website']);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([d?.stop(), t?.close()]);
    home?.cleanup();
  });

  async function ok(args: string[], input?: string) {
    const r = await monctl(args, { input });
    expect(r.code, `${args.join(' ')}\n${r.stderr}`).toBe(0);
    return r;
  }

  it('opens, updates, resolves, lists, shows and removes a posted incident', async () => {
    const opened = await ok([
      'status-pages',
      'incident',
      'open',
      'main',
      '--title',
      'Checkout errors',
      '--impact',
      'minor',
      '--resource',
      'web=major',
      '--resource',
      'api',
      '-m',
      'We are *looking* into it.',
    ]);
    expect(opened.stdout).toMatch(/^Posted incident (\d+) on main: investigating \(1 update\)\.$/m);
    const id = opened.stdout.match(/incident (\d+)/)![1];

    const updated = await ok(
      ['status-pages', 'incident', 'update', 'main', id, '--state', 'identified', '-f', '-', '--impact', 'major', '-o', 'json'],
      'A bad **deploy**.',
    );
    expect(updated.json()).toMatchObject({
      state: 'identified',
      impact: 'major',
      updates: [{ messageHtml: '<p>A bad <strong>deploy</strong>.</p>\n' }, {}],
    });
    const resolved = await ok(['status-pages', 'incident', 'resolve', 'main', id]);
    expect(resolved.stdout).toMatch(new RegExp(`^Resolved incident ${id} on main: resolved \\(3 updates\\)\\.$`, 'm'));

    await ok(['status-pages', 'incident', 'open', 'main', '--title', 'Slow API', '--impact', 'minor', '-m', 'Slow.']);
    const [head, ...rows] = tsv((await ok(['status-pages', 'incident', 'list', 'main'])).stdout);
    expect(head).toEqual(['ID', 'TITLE', 'IMPACT', 'STATE', 'RESOURCES', 'UPDATED']);
    expect(rows.map((r) => [r[1], r[2], r[3], r[4]])).toEqual([
      ['Slow API', 'minor', 'investigating', '-'],
      ['Checkout errors', 'major', 'resolved', 'api=minor,web'],
    ]);
    expect((await ok(['status-pages', 'incident', 'list', 'main', '--state', 'resolved', '-o', 'json'])).json()).toHaveLength(1);

    const shown = (await ok(['status-pages', 'incident', 'get', 'main', id])).stdout;
    expect(shown).toContain('Checkout errors');
    expect(shown).toMatch(/resolved\toperator\tThis incident has been resolved\./);
    expect(shown).toMatch(/investigating\toperator\tWe are \*looking\* into it\./);

    await ok(['status-pages', 'incident', 'rm', 'main', id, '-y']);
    expect((await monctl(['status-pages', 'incident', 'get', 'main', id])).code).toBe(3);
  });

  it('promotes an automatic incident with its timeline', async () => {
    t.set(503);
    expect((await monctl(['resources', 'check', 'web'])).code).toBe(5);
    t.set(200);
    const [auto] = (await ok(['incidents', 'list', '--resource', 'web', '--state', 'open', '-o', 'json'])).json();
    const promoted = (await ok(['status-pages', 'incident', 'promote', 'main', String(auto.id), '-m', 'On it.', '-o', 'json'])).json();
    expect(promoted).toMatchObject({
      title: 'web outage',
      sourceIncidentId: auto.id,
      state: 'investigating',
      resources: [{ name: 'web' }],
    });
    expect(promoted.updates.map((u: { automatic: boolean }) => u.automatic)).toEqual([false, true]);
    const shown = (await ok(['status-pages', 'incident', 'get', 'main', String(promoted.id)])).stdout;
    expect(shown).toMatch(/investigating\tmonitoring\tMonitoring found \*\*web\*\* down \(HTTP 503 Service Unavailable\)\./);
  });

  it('says what is wrong: usage errors exit 2 before any request, the daemon names the flag', async () => {
    const run = async (args: string[]) => monctl(['status-pages', 'incident', ...args]);
    const bad = await run(['open', 'main', '--title', 'x', '--impact', 'huge', '-m', 'x']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--impact must be one of none, minor, major, critical/);
    expect((await run(['open', 'main', '--impact', 'minor', '-m', 'x'])).code).toBe(2);
    expect((await run(['update', 'main', 'one', '--state', 'identified', '-m', 'x'])).code).toBe(2);
    expect((await run(['list', 'nowhere'])).code).toBe(3);
    const off = await run(['open', 'main', '--title', 'x', '--impact', 'minor', '-m', 'x', '--resource', 'other']);
    expect(off.code).toBe(1);
    expect(off.stderr).toMatch(/--resource/);
    expect(off.stderr).toMatch(/not on status page main/);
  });
});
