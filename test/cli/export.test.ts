import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Placeholders } from '../../cli/export/secrets.ts';
import { operations } from '../../src/api/operations.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { freePort } from '../helpers/free-port.ts';
import { startOidcProvider, type TestOidcProvider } from '../helpers/oidc-provider.ts';
import { adminRunner, type RunOptions, runMonctl, tempHome } from './run.ts';

/** Every kind of object apply takes; secrets from SEED_* variables. */
const SEED = (tcpPort: number) => `
groups:
  - {name: web, visibility: PUBLIC}
  - {name: internal, visibility: AUTHENTICATED}
resources:
  - name: api
    type: HTTP
    target: http://127.0.0.1:9/health
    active: false
    groups: [web, internal]
    severity: critical
    dependsOn: [db]
    method: POST
    headers: {Accept: application/json}
    secretHeaders: {X-Api-Key: "\${SEED_KEY}"}
    body: '{"probe": true}'
    contentType: application/json
    auth: {type: basic, username: probe, password: "\${SEED_PASS}"}
    expectStatus: ["200-299", 301]
    conditions: ["[STATUS] == 200", "[BODY].ok == true"]
  - {name: bearer, type: HTTP, target: "https://127.0.0.1:9/", active: false, auth: {type: bearer, token: "\${SEED_TOKEN}"}, timeoutSeconds: 5}
  - {name: remote, type: HTTP, target: "http://127.0.0.1:9/", active: false, locations: [daemon, edge-1], quorum: all}
  - {name: db, type: TCP, target: "127.0.0.1:9", active: false, groups: [internal], tcp: {expect: "+OK"}, failureThreshold: 3}
  - {name: mx, type: DNS, target: example.com, active: false, dns: {recordType: MX}, intervalSeconds: 600}
  - {name: nightly, type: PUSH, target: nightly-backup, cron: "0 3 * * *", timezone: Europe/Berlin, graceSeconds: 600}
  - {name: heartbeat, type: PUSH, periodSeconds: 300, graceSeconds: 30}
  - {name: pinger, type: PING, target: 127.0.0.1, active: false, ping: {count: 2}}
  - {name: cert, type: TLS, target: "127.0.0.1:9", active: false, tls: {minVersion: TLSv1.3}}
  - {name: dns-udp, type: UDP, target: "127.0.0.1:9", active: false, udp: {send: ping}}
  - {name: grpc, type: GRPC, target: "127.0.0.1:9", active: false}
  - {name: socket, type: WEBSOCKET, target: "ws://127.0.0.1:9/", active: false}
  - {name: shell, type: SSH, target: "127.0.0.1:9", active: false, upsideDown: true}
  - {name: image, type: DOCKER, target: "library/nginx:latest", active: false}
announcements:
  - {name: sunday, kind: WARNING, content: "<p>Maintenance on Sunday</p>", active: true, activeUntil: "2030-01-01T00:00:00Z"}
notifiers:
  - {name: phone, type: NTFY, url: "http://127.0.0.1:9", topic: alerts, priority: high, token: "\${SEED_NTFY}"}
  - {name: hook, type: WEBHOOK, url: "http://127.0.0.1:9/hook", headers: {Authorization: "Bearer \${SEED_HOOK}"}, signingSecret: "\${SEED_SIGN}"}
  - {name: mail, type: EMAIL, host: smtp.test, port: 587, security: STARTTLS, username: ops, password: "\${SEED_MAIL}", from: ops@example.com, to: [oncall@example.com]}
alertRules:
  - {name: pages, events: [INCIDENT_OPENED, INCIDENT_RESOLVED], notifiers: [phone, hook], groups: [web], resources: [db], severities: [critical], groupWaitSeconds: 30}
maintenance:
  - {name: weekly, days: [MON, THU], startTime: "02:00", durationMinutes: 60, timeZone: Europe/Paris, groups: [internal]}
  - {name: upgrade, startsAt: "2030-12-01T22:00:00Z", endsAt: "2030-12-02T01:00:00Z", resources: [api], agents: [edge-2]}
statusPages:
  - {slug: status, title: Our status, description: All of it, groups: [web, internal], footer: Thanks, subscriptions: true, emailNotifier: mail}
agents:
  - name: edge-1
  - name: edge-2
routes:
  - name: web
    hostname: web.test
    target: http://127.0.0.1:8081
    agents: [edge-1, {name: edge-2, target: "http://127.0.0.1:8082"}]
    affinity: client-ip
    policy: least-outstanding
    ipDeny: [10.9.0.0/16]
    ipAllow: [10.1.2.3/8, 192.0.2.1]
    basicUsers: [{username: bob, password: "\${SEED_BOB}"}, {username: alice, password: "\${SEED_ALICE}"}]
    responseHeaders: {set: {X-Frame-Options: DENY}}
    requestHeaders: {set: {X-Env: prod}, remove: [Cookie]}
    rateLimit: {perSecond: 5, burst: 10}
    stripPrefix: true
    hostHeader: internal.web
    healthCheck: {path: /healthz, intervalSeconds: 5}
  - name: sso
    agents: [edge-2]
    target: http://127.0.0.1:8083
    hostname: sso.test
    pathPrefix: /app
    auth: oidc
    sso: {emails: [Ann@Example.com], domains: [example.org], sessionTtl: 12h}
    httpsRedirect: false
  - name: pg
    agents: [edge-2]
    target: 127.0.0.1:5432
    listenPort: ${tcpPort}
    ipAllow: [192.0.2.0/24]
`;

const SEED_ENV = {
  SEED_KEY: 'k-1',
  SEED_PASS: 'p-1',
  SEED_TOKEN: 't-1',
  SEED_NTFY: 'tk_1',
  SEED_HOOK: 'h-1',
  SEED_SIGN: `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
  SEED_MAIL: 'm-1',
  SEED_ALICE: 'alice-password',
  SEED_BOB: 'bob-password',
};

describe('monctl export', () => {
  let provider: TestOidcProvider;
  let one: TestDaemon;
  let two: TestDaemon;
  const home = tempHome();
  let first: (args: string[], opts?: RunOptions) => ReturnType<typeof runMonctl>;
  let second: typeof first;
  const path = (name: string) => join(home.dir, name);
  /** The TCP route's port on the first daemon; both listen on this host, so the second gets another. */
  let tcpPort = 0;

  beforeAll(async () => {
    provider = await startOidcProvider();
    const args = ['--oidc-issuer', provider.issuer, '--oidc-client-id', 'monctl'];
    [one, two] = await Promise.all([startDaemon({ args }), startDaemon({ args })]);
    first = adminRunner(one, join(home.dir, 'one'));
    second = adminRunner(two, join(home.dir, 'two'));
    tcpPort = await freePort();
    writeFileSync(path('seed.yaml'), SEED(tcpPort));
    const seeded = await first(['apply', '-f', path('seed.yaml')], { env: SEED_ENV });
    expect(seeded.code, seeded.stderr).toBe(0);
    // Written another way than apply: an announcement without apply's name.
    await one.admin.call(operations.createAnnouncement, {
      body: { kind: 'INFORMATION', content: '<p>Hello</p>', active: true, activeUntil: null },
    });
  }, 60_000);
  afterAll(async () => {
    await Promise.all([one?.stop(), two?.stop()]);
    await provider?.stop();
    home.cleanup();
  });

  it('writes every section, secrets as placeholders listed on stderr and in --env-template', async () => {
    const res = await first(['export', '-f', path('export.yaml'), '--env-template', path('export.env')]);
    expect(res.code, res.stderr).toBe(0);
    const text = readFileSync(path('export.yaml'), 'utf8');
    for (const section of [
      'groups',
      'resources',
      'announcements',
      'notifiers',
      'alertRules',
      'maintenance',
      'statusPages',
      'agents',
      'routes',
    ])
      expect(text).toMatch(new RegExp(`^${section}:`, 'm'));
    for (const secret of Object.values(SEED_ENV)) expect(text).not.toContain(secret);
    const expected = [
      'RESOURCE_API_HEADER_X_API_KEY',
      'RESOURCE_API_PASSWORD',
      'RESOURCE_BEARER_TOKEN',
      'NOTIFIER_HOOK_HEADER_AUTHORIZATION',
      'NOTIFIER_HOOK_SIGNING_SECRET',
      'NOTIFIER_MAIL_PASSWORD',
      'NOTIFIER_PHONE_TOKEN',
      'ROUTE_WEB_USER_ALICE_PASSWORD',
      'ROUTE_WEB_USER_BOB_PASSWORD',
    ];
    const listed = [...res.stderr.matchAll(/^ {2}([A-Z0-9_]+) {2}\(/gm)].map((m) => m[1]);
    expect(listed.sort()).toEqual([...expected].sort());
    for (const name of expected) expect(text).toContain(`\${${name}}`);
    expect(
      readFileSync(path('export.env'), 'utf8')
        .match(/^[A-Z0-9_]+=$/gm)
        ?.map((l) => l.slice(0, -1))
        .sort(),
    ).toEqual([...expected].sort());
    expect(text).toMatch(/^ {2}- name: announcement-\d+\n {4}kind: INFORMATION\n {4}content: <p>Hello<\/p>/m);
    expect(text).toContain('sessionTtl: 43200');
  });

  it('apply --dry-run of the export on the same daemon shows no change', async () => {
    const env = Object.fromEntries(
      readFileSync(path('export.env'), 'utf8')
        .match(/^[A-Z0-9_]+(?==$)/gm)!
        .map((n) => [n, 'same-value']),
    );
    const dry = await first(['apply', '-f', path('export.yaml'), '--dry-run'], { env });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/^No changes: the daemon already matches the file\.$/m);
  });

  it('applied to an empty daemon with the variables set, it exports to the same bytes (yaml and json)', async () => {
    const env = envFor(path('export.env'));
    const other = await freePort();
    const moved = readFileSync(path('export.yaml'), 'utf8').replace(`listenPort: ${tcpPort}\n`, `listenPort: ${other}\n`);
    expect(moved).toContain(`listenPort: ${other}\n`);
    writeFileSync(path('moved.yaml'), moved);
    const applied = await second(['apply', '-f', path('moved.yaml')], { env });
    expect(applied.code, applied.stderr).toBe(0);
    const again = await second(['export']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe(moved);
    const [a, b] = await Promise.all([first(['export', '-o', 'json']), second(['export', '-o', 'json'])]);
    expect(a.code, a.stderr).toBe(0);
    expect(JSON.parse(a.stdout).routes.map((r: { name: string }) => r.name)).toEqual(['pg', 'sso', 'web']);
    // A file ending in .json is JSON without -o.
    expect((await first(['export', '-f', path('export.json')])).code).toBe(0);
    expect(readFileSync(path('export.json'), 'utf8')).toBe(a.stdout);
    expect(b.stdout).toBe(a.stdout.replace(`"listenPort": ${tcpPort},`, `"listenPort": ${other},`));
    // The route's users reached the new daemon, with their passwords.
    const web = (await second(['routes', 'get', 'web', '-o', 'json'])).json();
    expect(web.basicUsers).toEqual(['alice', 'bob']);
  });

  it('says why it fails: an unreachable daemon, an output it cannot write, a format it does not write', async () => {
    const down = await runMonctl(['export'], {
      env: { MONCTL_SERVER: `http://127.0.0.1:${await freePort()}`, MONCTL_API_KEY: 'x', XDG_CONFIG_HOME: home.dir },
    });
    expect(down.code).not.toBe(0);
    expect(down.stderr).toMatch(/^error: cannot reach http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED$/m);
    // Under a file, not a directory: refused whoever runs the test (root included).
    const denied = await first(['export', '-f', join(path('export.yaml'), 'x.yaml')]);
    expect(denied.code).toBe(1);
    expect(denied.stderr).toMatch(/cannot write the export .*x\.yaml: (ENOTDIR|ENOENT)/);
    const xml = await first(['export', '-o', 'xml']);
    expect(xml.code).toBe(2);
  });
});

describe('export placeholders', () => {
  it('are named from object and field, upper-cased, and numbered on a collision', () => {
    const env = new Placeholders();
    expect(env.ref('NOTIFIER', 'pager', 'routing_Key')).toBe('${NOTIFIER_PAGER_ROUTING_KEY}');
    expect(env.ref('ROUTE', 'web', 'USER', 'a.b', 'PASSWORD')).toBe('${ROUTE_WEB_USER_A_B_PASSWORD}');
    expect(env.ref('ROUTE', 'web', 'USER', 'a-b', 'PASSWORD')).toBe('${ROUTE_WEB_USER_A_B_PASSWORD_2}');
    expect(env.list().map((v) => v.name)).toEqual([
      'NOTIFIER_PAGER_ROUTING_KEY',
      'ROUTE_WEB_USER_A_B_PASSWORD',
      'ROUTE_WEB_USER_A_B_PASSWORD_2',
    ]);
  });
});

/** The template's variables, each set to a value of its own. */
function envFor(file: string): Record<string, string> {
  return Object.fromEntries(
    readFileSync(file, 'utf8')
      .match(/^[A-Z0-9_]+(?==$)/gm)!
      // A signing secret has a form of its own.
      .map((n) => [n, n.endsWith('SIGNING_SECRET') ? `whsec_${Buffer.alloc(32, 9).toString('base64')}` : `value-of-${n.toLowerCase()}`]),
  );
}
