import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/daemon.ts';
import { jsonOf, reportVariables } from './import-run.ts';
import { useAdminCli } from './run.ts';

const cli = useAdminCli();
const { monctl } = cli;
const FIXTURE = join(ROOT, 'test/cli/fixtures/import/kuma-backup.json');

/** Every line, exactly: what was left behind and why, then the variables the file's placeholders name. */
const REPORT = [
  'monitor 6 "Totals" (json-query): the JSON query "$sum(orders.amount)" is a JSONata expression, not a plain path',
  'monitor 10 "Orders gRPC" (grpc-keyword): monctl\'s GRPC checks the gRPC health service, not a method\'s answer',
  'monitor 11 "Redis container" (docker): monctl\'s DOCKER checks that an image can be pulled from a registry, not that a container runs on a Docker host',
  'monitor 12 "Nightly backup" (push): its push URL changes: point the job at monctl\'s ping URL for nightly-backup',
  'monitor 13 "CS server" (steam): monctl has no check for steam monitors',
  'monitor 14 "Broker" (mqtt): monctl has no check for mqtt monitors',
  'monitor 15 "Checkout flow" (real-browser): monctl has no browser check',
  'notification 5 "Signal group" (signal): monctl has no signal notifier',
  'maintenance 3 "Odd days" (cron): monctl\'s windows are one-off or weekly',
  'status page 1 "public": domains status.example.org left out: a page has one custom host name',
  'status page 1 "public": custom CSS left out: monctl pages take branding, not CSS',
  'set KUMA_API_STATUS_AUTHORIZATION: header Authorization of monitor 3',
  'set KUMA_VERSION_PASSWORD: basic auth password of monitor 5',
  'set KUMA_SLACK_OPS_URL: url of notifier Slack-ops',
  'set KUMA_MAIL_ADMINS_PASSWORD: password of notifier Mail-admins',
  'set KUMA_HOOK_HEADER_X_TOKEN: header X-Token of notifier Hook',
  'set KUMA_TELEGRAM_TOKEN: token of notifier Telegram',
  'set KUMA_NTFY_TOKEN: token of notifier ntfy',
];
/** What a user sets before apply: each variable the report names. */
const ENV: Record<string, string> = {
  KUMA_API_STATUS_AUTHORIZATION: 'Bearer s3cret',
  KUMA_VERSION_PASSWORD: 'pa55',
  KUMA_SLACK_OPS_URL: 'https://hooks.slack.com/services/T000/B000/XXXX',
  KUMA_MAIL_ADMINS_PASSWORD: 'hunter2',
  KUMA_HOOK_HEADER_X_TOKEN: 'abc',
  KUMA_TELEGRAM_TOKEN: '123456:ABC-DEF1234ghIkl',
  KUMA_NTFY_TOKEN: 'tk_abc',
};

const json = jsonOf(cli);

describe('monctl import kuma', () => {
  it('writes an apply file and a report of what it could not map, touching no daemon', async () => {
    const out = join(cli.home.dir, 'kuma.yaml');
    const report = join(cli.home.dir, 'kuma-report.txt');
    const r = await monctl(['import', 'kuma', FIXTURE, '-w', out, '--report', report]);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(report, 'utf8').split('\n').slice(0, -1)).toEqual(REPORT);
    expect(Object.keys(ENV)).toEqual(reportVariables(REPORT));
    expect(r.stderr).toContain('8 resources, 5 notifiers, 4 alert rules, 2 maintenance windows, 1 status page');
    expect(readFileSync(out, 'utf8')).not.toMatch(/hunter2|s3cret|pa55|XXXX|123:abc|tk_abc|"abc"/);
    expect(await json(['resources', 'list'])).toEqual([]);
  });

  it('writes JSON with -o json', async () => {
    const r = await monctl(['import', 'kuma', FIXTURE, '-o', 'json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().resources.map((x: { name: string }) => x.name)).toContain('Nightly backup');
  });

  it('apply takes the file (dry run first), and the daemon then holds what Kuma had', async () => {
    const out = join(cli.home.dir, 'kuma.yaml');
    const dry = await monctl(['apply', '-f', out, '--dry-run'], { env: ENV });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('+ create resource Website');
    const applied = await monctl(['apply', '-f', out], { env: ENV });
    expect(applied.code, applied.stderr).toBe(0);
    const resources: Array<Record<string, any>> = await json(['resources', 'list']);
    const byName = (n: string) => resources.find((x) => x.name === n)!;
    expect(resources.map((x) => x.name).sort()).toEqual(
      ['API status', 'Database', 'Gateway', 'Mail MX', 'Nightly backup', 'No errors page', 'Version', 'Website'].sort(),
    );
    const api = await json(['resources', 'get', String(byName('API status').id)]);
    expect(api).toMatchObject({
      resourceType: 'HTTP',
      method: 'POST',
      skipTLS: true,
      followRedirects: false,
      expectStatus: ['200', '301-302'],
    });
    expect(api.conditions).toEqual(['[BODY] == pat(*all good*)']);
    expect((await json(['resources', 'get', String(byName('Database').id)])).target).toBe('db.example.com:5432');
    expect((await json(['resources', 'get', String(byName('Mail MX').id)])).dns).toMatchObject({ recordType: 'MX', resolver: '1.1.1.1' });
    expect((await json(['resources', 'get', String(byName('Nightly backup').id)])).push).toMatchObject({ periodSeconds: 86400 });
    const groups: Array<{ name: string; id: number }> = await json(['groups', 'list']);
    expect(groups.map((g) => g.name).sort()).toEqual(['Production', 'Services', 'region:eu', 'web']);
    const notifiers: Array<{ name: string; type: string; enabled: boolean }> = await json(['notifiers', 'list']);
    expect(notifiers.map((n) => `${n.name} ${n.type}`).sort()).toEqual(
      ['Hook WEBHOOK', 'Mail-admins EMAIL', 'Slack-ops SLACK', 'Telegram TELEGRAM', 'ntfy NTFY'].sort(),
    );
    const rules: Array<{ name: string; events: string[]; resourceIds: number[]; groupIds: number[] }> = await json(['alert-rules', 'list']);
    expect(rules.map((x) => x.name).sort()).toEqual(['kuma-Hook', 'kuma-Mail-admins', 'kuma-Slack-ops', 'kuma-ntfy']);
    const rule = (n: string) => rules.find((x) => x.name === n)!;
    expect(rule('kuma-Slack-ops').events.sort()).toEqual(['CERT_EXPIRING', 'INCIDENT_OPENED', 'INCIDENT_RESOLVED']);
    expect(rule('kuma-Slack-ops').resourceIds.sort()).toEqual([byName('API status').id, byName('Website').id].sort());
    // The group monitor's notification: the rule covers the group.
    const production = groups.find((g) => g.name === 'Production') as { id: number };
    expect(rule('kuma-ntfy')).toMatchObject({ events: ['INCIDENT_OPENED', 'INCIDENT_RESOLVED'], groupIds: [production.id] });
    const windows: Array<{ name: string; kind: string }> = await json(['maintenance', 'list']);
    expect(windows.map((w) => `${w.name} ${w.kind}`).sort()).toEqual(['DB migration ONE_OFF', 'Patch night WEEKLY']);
    const pages: Array<{ slug: string; title: string }> = await json(['status-pages', 'list']);
    expect(pages.map((p) => `${p.slug} ${p.title}`)).toEqual(['public Example status']);
    const again = await monctl(['apply', '-f', out, '--dry-run'], { env: ENV });
    // Applied whole: a second run creates nothing (notifiers whose URL is the secret are sent again, as apply does).
    expect(again.stdout).not.toMatch(/^[+-] /m);
  });

  it("refuses to write a file apply would refuse (checked with apply's validators first)", async () => {
    const backup = JSON.parse(readFileSync(FIXTURE, 'utf8'));
    const mail = backup.notificationList[1];
    mail.config = mail.config.replace('ops@example.com, oncall@example.com', '');
    const bad = join(cli.home.dir, 'bad-kuma.json');
    writeFileSync(bad, JSON.stringify(backup));
    const out = join(cli.home.dir, 'bad.yaml');
    const r = await monctl(['import', 'kuma', bad, '-w', out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('notifiers[1].to: must be a list of addresses');
    expect(existsSync(out)).toBe(false);
  });

  it('says when the file is not a Kuma backup', async () => {
    const r = await monctl(['import', 'kuma', join(ROOT, 'package.json')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('not an Uptime Kuma backup: it has no monitorList');
  });
});
