import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/daemon.ts';
import { jsonOf, reportVariables } from './import-run.ts';
import { useAdminCli } from './run.ts';

const cli = useAdminCli();
const { monctl } = cli;
const FIXTURE = join(ROOT, 'test/cli/fixtures/import/gatus-config.yaml');

/** Every line, exactly: what was left behind and why, then the variables the file's placeholders name. */
const REPORT = [
  'alerting provider slack: its overrides for groups data left out: one notifier per provider',
  'alerting provider teams: an Office 365 connector, which Microsoft retired: create a Workflows webhook in the channel (teams-workflows)',
  "alerting provider custom: its body template left out: monctl's webhook sends its own JSON",
  'alerting provider twilio: monctl has no twilio notifier',
  'endpoint "website": condition "[DOMAIN_EXPIRATION] > 720h" left out: [DOMAIN_EXPIRATION] is a Gatus placeholder monctl does not support',
  'endpoint "api-health": alert twilio left out: no notifier was made for it',
  'endpoint "gateway": condition "[STATUS] == 200" left out: [STATUS] does not apply to PING resources (they have [CONNECTED], [RESPONSE_TIME], [PACKET_LOSS], [IP])',
  'endpoint "gateway": alert teams left out: no notifier was made for it',
  'endpoint "broker": monctl has no sctp check',
  'external endpoint "nightly-backup": pushes go to monctl\'s ping URL for nightly-backup now, not Gatus\'s API',
  'external endpoint "adhoc-job": no heartbeat interval: monctl\'s default period applies',
  'external endpoint "adhoc-job": pushes go to monctl\'s ping URL for adhoc-job now, not Gatus\'s API',
  'set GATUS_SLACK_WEBHOOK_URL: webhook url of notifier gatus-slack',
  'set GATUS_DISCORD_WEBHOOK_URL: webhook url of notifier gatus-discord',
  'set GATUS_TEAMS_WORKFLOWS_WEBHOOK_URL: webhook url of notifier gatus-teams-workflows',
  'set GATUS_EMAIL_PASSWORD: password of notifier gatus-email',
  'set GATUS_CUSTOM_HEADER_X_API_KEY: header X-Api-Key of notifier gatus-custom',
  'set GATUS_PAGERDUTY_INTEGRATION_KEY: integration key of notifier gatus-pagerduty',
  'set GATUS_TELEGRAM_TOKEN: token of notifier gatus-telegram',
  'set GATUS_GOOGLECHAT_WEBHOOK_URL: webhook url of notifier gatus-googlechat',
  'set GATUS_API_HEALTH_AUTHORIZATION: header Authorization of endpoint api-health',
];
/** What a user sets before apply: each variable the report names. */
const ENV: Record<string, string> = {
  GATUS_SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/T000/B000/XXXX',
  GATUS_DISCORD_WEBHOOK_URL: 'https://discord.com/api/webhooks/1/abc',
  GATUS_TEAMS_WORKFLOWS_WEBHOOK_URL: 'https://prod-00.westeurope.logic.azure.com:443/workflows/abc/triggers/manual/paths/invoke',
  GATUS_EMAIL_PASSWORD: 'hunter2',
  GATUS_CUSTOM_HEADER_X_API_KEY: 'abc123',
  GATUS_PAGERDUTY_INTEGRATION_KEY: '0123456789abcdef0123456789abcdef',
  GATUS_TELEGRAM_TOKEN: '123456:ABC-DEF1234ghIkl',
  GATUS_GOOGLECHAT_WEBHOOK_URL: 'https://chat.googleapis.com/v1/spaces/AAAA/messages?key=k&token=t',
  GATUS_API_HEALTH_AUTHORIZATION: 'Bearer s3cret',
};

const json = jsonOf(cli);

describe('monctl import gatus', () => {
  const out = () => join(cli.home.dir, 'gatus.yaml');

  it('writes an apply file and a report of what it could not map, touching no daemon', async () => {
    const report = join(cli.home.dir, 'gatus-report.txt');
    const r = await monctl(['import', 'gatus', FIXTURE, '-w', out(), '--report', report]);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(report, 'utf8').split('\n').slice(0, -1)).toEqual(REPORT);
    expect(Object.keys(ENV)).toEqual(reportVariables(REPORT));
    expect(r.stderr).toContain('9 resources, 9 notifiers, 8 alert rules, 2 maintenance windows');
    expect(readFileSync(out(), 'utf8')).not.toMatch(/hunter2|s3cret|XXXX|123:abc|abc123|0123456789abcdef/);
    expect(await json(['resources', 'list'])).toEqual([]);
  });

  it('apply takes the file (dry run first), and the daemon then holds the endpoints, alerts and maintenance', async () => {
    const dry = await monctl(['apply', '-f', out(), '--dry-run'], { env: ENV });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('+ create resource website');
    const applied = await monctl(['apply', '-f', out()], { env: ENV });
    expect(applied.code, applied.stderr).toBe(0);
    const resources: Array<Record<string, any>> = await json(['resources', 'list']);
    const get = async (n: string) => json(['resources', 'get', String(resources.find((x) => x.name === n)!.id)]);
    expect(resources.map((x) => `${x.name} ${x.resourceType}`).sort()).toEqual(
      [
        'adhoc-job PUSH',
        'api-health HTTP',
        'db TCP',
        'gateway PING',
        'mail-tls TLS',
        'nightly-backup PUSH',
        'orders GRPC',
        'resolver DNS',
        'website HTTP',
      ].sort(),
    );
    const api = await get('api-health');
    expect(api).toMatchObject({ method: 'POST', skipTLS: true, timeoutSeconds: 10, failureThreshold: 5, successThreshold: 3 });
    expect(api.conditions).toEqual([
      '[STATUS] == any(200, 201)',
      '[BODY].status == UP',
      '[BODY].data[0].id == pat(svc-*)',
      'len([BODY].data) > 0',
      'has([BODY].errors) == false',
      '[BODY] == pat(*UP*)',
    ]);
    expect((await get('website')).conditions).toEqual(['[STATUS] == 200', '[RESPONSE_TIME] < 500', '[CERTIFICATE_EXPIRATION] > 48h']);
    expect((await get('resolver')).conditions).toEqual(['[DNS_RCODE] == NOERROR', '[BODY] == 93.184.216.34']);
    expect((await get('db')).conditions).toEqual(['[CONNECTED] == true', '[IP] == 10.0.0.5']);
    expect((await get('mail-tls')).tls).toMatchObject({ starttls: 'smtp' });
    expect((await get('nightly-backup')).push).toMatchObject({ periodSeconds: 86400 });
    const orders = await get('orders');
    expect(orders).toMatchObject({ target: 'orders.example.com:443', grpc: { service: '', tls: true } });
    expect(orders.conditions).toEqual(['[CONNECTED] == true', '[BODY].status == SERVING']);
    const groups: Array<{ name: string }> = await json(['groups', 'list']);
    expect(groups.map((g) => g.name).sort()).toEqual(['core', 'data', 'jobs']);
    const notifiers: Array<{ name: string; type: string }> = await json(['notifiers', 'list']);
    expect(notifiers.map((n) => `${n.name} ${n.type}`).sort()).toEqual(
      [
        'gatus-custom WEBHOOK',
        'gatus-discord DISCORD',
        'gatus-email EMAIL',
        'gatus-googlechat GOOGLE_CHAT',
        'gatus-ntfy NTFY',
        'gatus-pagerduty PAGERDUTY',
        'gatus-slack SLACK',
        'gatus-teams-workflows TEAMS',
        'gatus-telegram TELEGRAM',
      ].sort(),
    );
    const rules: Array<{ name: string; events: string[] }> = await json(['alert-rules', 'list']);
    expect(rules.find((x) => x.name === 'gatus-slack-resolved')?.events.sort()).toEqual(['INCIDENT_OPENED', 'INCIDENT_RESOLVED']);
    expect(rules.find((x) => x.name === 'gatus-pagerduty')?.events).toEqual(['INCIDENT_OPENED']);
    const windows: Array<{ name: string; kind: string }> = await json(['maintenance', 'list']);
    expect(windows.map((w) => `${w.name} ${w.kind}`).sort()).toEqual(['gatus-maintenance WEEKLY', 'nightly-backup-1 WEEKLY']);
  });

  it('says when the file is not a Gatus config', async () => {
    const r = await monctl(['import', 'gatus', join(ROOT, 'biome.json')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('not a Gatus config: it has no endpoints or external-endpoints');
  });
});
