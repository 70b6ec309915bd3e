import { describe, expect, it } from 'vitest';
import { runMonctl, useAdminCli } from './run.ts';

const cli = useAdminCli();
const { monctl } = cli;

/** Header line and rows of tab-separated output (stdout is a pipe). */
const tsv = (text: string) =>
  text
    .trimEnd()
    .split('\n')
    .map((l) => l.split('\t'));
/** A server nothing listens on: a command that made a request would fail with ECONNREFUSED (exit 1). */
const NOWHERE = { MONCTL_SERVER: 'http://127.0.0.1:1' };

describe('CLI papercuts (issue 25 item 8)', () => {
  it('a mistyped command prints the suggestion and a one-line hint, not the whole help, exit 2', async () => {
    const res = await runMonctl(['resorces', 'list']);
    expect(res.code).toBe(2);
    expect(res.stderr).toBe("error: unknown command 'resorces'\n(Did you mean resources?)\nRun 'monctl --help' for usage.\n");
    expect(res.stdout).toBe('');
  });

  it('resources add: an unknown --type exits 2 naming --type and the valid types, before any request', async () => {
    const res = await runMonctl(['resources', 'add', 'x', '--type', 'FTP', '--target', 'ftp.example.com:21'], { env: NOWHERE });
    expect(res.code).toBe(2);
    expect(res.stderr).toBe('error: --type must be one of HTTP, DOCKER, TCP, PUSH, DNS, PING, TLS, UDP, GRPC, WEBSOCKET, SSH, not "FTP"\n');
    const update = await runMonctl(['resources', 'update', '1', '--type', 'ftp'], { env: NOWHERE });
    expect(update.code).toBe(2);
    expect(update.stderr).toMatch(/--type must be one of/);
  });

  it('resources add: a --target that is not a URL asks for --type; an invalid one is named --target, with why', async () => {
    const noType = await runMonctl(['resources', 'add', 'x', '--target', 'not a url'], { env: NOWHERE });
    expect(noType.code).toBe(2);
    expect(noType.stderr).toMatch(
      /needs --type \(one of HTTP, DOCKER, TCP, PUSH, DNS, PING, TLS, UDP, GRPC, WEBSOCKET, SSH\): --target "not a url" is not an http:\/\/ or https:\/\/ URL/,
    );
    const invalid = await monctl(['resources', 'add', 'x', '--type', 'http', '--target', 'not a url']);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toBe('error: Invalid value for --target: must not contain whitespace (HTTP target)\n');
    const tcp = await monctl(['resources', 'add', 'x', '--type', 'tcp', '--target', 'db.example.com']);
    expect(tcp.stderr).toMatch(/^error: Invalid value for --target: must be host:port/);
  });

  it('maintenance add takes --start now and --end +30m, and its errors name --start/--end, not startsAt/endsAt', async () => {
    expect((await monctl(['resources', 'add', 'api', '--target', 'http://127.0.0.1:9/'])).code).toBe(0);
    const before = Date.now();
    const add = await monctl(['maintenance', 'add', 'hotfix', '--start', 'now', '--end', '+30m', '--resource', 'api', '-o', 'json']);
    expect(add.code, add.stderr).toBe(0);
    const w = add.json();
    expect(w).toMatchObject({ kind: 'ONE_OFF', activeNow: true });
    const start = Date.parse(`${w.startsAt}Z`);
    expect(start).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    expect(Date.parse(`${w.endsAt}Z`) - start).toBe(30 * 60_000);
    const later = await monctl(['maintenance', 'add', 'later', '--start', '+1h', '--end', '+1h30m', '--resource', 'api', '-o', 'json']);
    expect(later.json()).toMatchObject({ activeNow: false });

    const backwards = await monctl(['maintenance', 'add', 'x', '--start', 'now', '--end', '2020-01-01T00:00:00Z', '--resource', 'api']);
    expect(backwards.code).toBe(1);
    expect(backwards.stderr).toBe('error: Invalid value for --end: must be after --start\n');
    const garbled = await monctl(['maintenance', 'add', 'x', '--start', 'tomorrow', '--end', '+1h', '--resource', 'api']);
    expect(garbled.stderr).toMatch(/^error: .*--start: must be a date-time/);
    expect(garbled.stderr).not.toMatch(/startsAt|endsAt/);
    const badDuration = await monctl(['maintenance', 'add', 'x', '--start', 'now', '--end', '+soon', '--resource', 'api']);
    expect(badDuration.code).toBe(2);
    expect(badDuration.stderr).toMatch(/--end must be now, \+DURATION/);
  });

  it('alert-rules list and get show notifier names; incidents list shows maintenance; incidents get names the resource', async () => {
    expect((await monctl(['notifiers', 'add', 'pager', '--type', 'webhook', '--url', 'http://127.0.0.1:9/hook'])).code).toBe(0);
    expect((await monctl(['alert-rules', 'add', 'all-down', '--event', 'INCIDENT_OPENED', '--notifier', 'pager'])).code).toBe(0);
    const [head, ...rows] = tsv((await monctl(['alert-rules', 'list'])).stdout);
    expect(rows[0][head.indexOf('NOTIFIERS')]).toBe('pager');
    expect((await monctl(['alert-rules', 'get', 'all-down'])).stdout).toMatch(/^NOTIFIERS\tpager$/m);
    // -o json stays the API's object, with ids.
    expect((await monctl(['alert-rules', 'get', 'all-down', '-o', 'json'])).json().notifierIds).toEqual([expect.any(Number)]);

    // An incident in the window opened above (api is in maintenance): a failing check of an unreachable port.
    expect((await monctl(['resources', 'update', 'api', '--failure-threshold', '1'])).code).toBe(0);
    expect((await monctl(['resources', 'check', 'api'])).code).toBe(5);
    const [ihead, ...irows] = tsv((await monctl(['incidents', 'list'])).stdout);
    expect(ihead).toContain('MAINT');
    expect(irows[0][ihead.indexOf('MAINT')]).toBe('yes');
    const id = irows[0][0];
    const get = await monctl(['incidents', 'get', id]);
    const resourceId = (await monctl(['resources', 'get', 'api', '-o', 'json'])).json().id;
    expect(get.stdout).toMatch(new RegExp(`^RESOURCE\tapi \\(id ${resourceId}\\)$`, 'm'));
  });
});
