import { describe, expect, it } from 'vitest';
import { send } from '../helpers/http.ts';
import { useAdminCli } from './run.ts';

const cli = useAdminCli();
const { monctl, file } = cli;

/** The daemon's request count by method and route template (its Prometheus histogram). */
async function requests(method: string, route: string): Promise<number> {
  const text = (await send(cli.d.url, 'GET', '/actuator/prometheus')).text;
  let n = 0;
  for (const m of text.matchAll(/^monctl_http_request_duration_seconds_count\{([^}]*)\} (\d+)$/gm))
    if (m[1].includes(`method="${method}"`) && m[1].includes(`route="${route}"`)) n += Number(m[2]);
  return n;
}

const resources = (names: string[], interval: (name: string) => number) =>
  names
    .map(
      (n) =>
        `  - name: ${n}\n    type: HTTP\n    target: http://127.0.0.1:9/${n}\n    intervalSeconds: ${interval(n)}\n    active: false\n    groups: [fleet]`,
    )
    .join('\n');
const fleet = (names: string[], interval: (name: string) => number = () => 300) =>
  `groups:\n  - name: fleet\nresources:\n${resources(names, interval)}\n`;
const names = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `site-${String(from + i).padStart(3, '0')}`);

/** `apply -f` writes resources through `POST /admin/api/resources/batch`; `resources list` reads in pages. */
describe('apply and resources list at scale', () => {
  it('creates, updates and prunes resources through the batch endpoint, printing the plan as before', async () => {
    const before = await requests('POST', '/admin/api/resources/batch');
    const first = await monctl(['apply', '-f', file('v1.yaml', fleet(names(30)))]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^\+ create group fleet$/m);
    expect(first.stdout).toMatch(/^\+ create resource site-029$/m);
    expect(first.stdout).toMatch(/^Applied: 31 created, 0 updated, 0 deleted\.$/m);
    expect(await requests('POST', '/admin/api/resources/batch')).toBe(before + 1);
    expect(await requests('POST', '/api/resources')).toBe(0);

    // Two changed, five gone: one more batch, no single update or delete.
    const changed = fleet(names(25), (n) => (n === 'site-000' || n === 'site-001' ? 600 : 300));
    const second = await monctl(['apply', '-f', file('v2.yaml', changed), '--prune', '--yes']);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(/^~ update resource site-000 \(intervalSeconds\)$/m);
    expect(second.stdout).toMatch(/^- delete resource site-029$/m);
    expect(second.stdout).toMatch(/^Applied: 0 created, 2 updated, 5 deleted\.$/m);
    expect(await requests('POST', '/admin/api/resources/batch')).toBe(before + 2);
    expect(await requests('PATCH', '/api/resources/{id}')).toBe(0);
    expect(await requests('DELETE', '/api/resources/{id}')).toBe(0);

    const again = await monctl(['apply', '-f', file('v2.yaml', changed)]);
    expect(again.stdout).toContain('No changes');
    const listed = await monctl(['resources', 'list', '-o', 'json']);
    expect(
      listed
        .json()
        .map((r: { name: string; intervalSeconds: number }) => [r.name, r.intervalSeconds])
        .slice(0, 3),
    ).toEqual([
      ['site-000', 600],
      ['site-001', 600],
      ['site-002', 300],
    ]);
  });

  it('names every resource the daemon refused, and the batch changes nothing', async () => {
    const bad = `${fleet(names(3, 100))}  - name: broken\n    type: HTTP\n    target: http://127.0.0.1:9/x\n    conditions: ["[STATUS] =="]\n`;
    const res = await monctl(['apply', '-f', file('bad.yaml', bad)]);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toMatch(/create resource broken: conditions\.0: /);
    const listed = await monctl(['resources', 'list', '-o', 'json']);
    expect(listed.json().some((r: { name: string }) => r.name === 'site-100' || r.name === 'broken')).toBe(false);
  });

  it('lists page by page, following Link, with the same output as one read', async () => {
    const pagesBefore = await requests('GET', '/admin/api/resources');
    const whole = await monctl(['resources', 'list', '-o', 'json']);
    const paged = await monctl(['resources', 'list', '-o', 'json', '--page-size', '7']);
    expect(paged.code, paged.stderr).toBe(0);
    expect(paged.stdout).toBe(whole.stdout);
    expect(whole.json()).toHaveLength(25);
    // One read, then 25 in pages of 7: four more.
    expect((await requests('GET', '/admin/api/resources')) - pagesBefore).toBe(1 + 4);
    const table = await monctl(['resources', 'list', '--page-size', '10']);
    const lines = table.stdout.trim().split('\n');
    expect(lines.filter((l) => l.startsWith('ID\t'))).toHaveLength(1);
    expect(lines).toHaveLength(26);
    const ndjson = await monctl(['resources', 'list', '-o', 'ndjson', '--page-size', '10']);
    expect(
      ndjson.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).name),
    ).toEqual(whole.json().map((r: { name: string }) => r.name));
    const refused = await monctl(['resources', 'list', '--page-size', '0']);
    expect(refused.code).toBe(2);
  });
});
