import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type Receiver, startReceiver } from '../notifiers/receivers.ts';
import { type RunResult, useAdminCli } from './run.ts';

/**
 * The CLI of the channel types, templates, severity and dependencies, through the real
 * `bin/monctl` against one real daemon: each type's flags and secrets (stdin, never flags),
 * flags refused for a type that does not take them, DESTINATION per type, templates from
 * a file and removed, `test --event` delivered to a real receiver, `preview`, resources'
 * `--severity`/`--depends-on`, rules' `--severities`/`--severity-override`, and the same
 * in `apply -f` (secrets as ${ENV}, dependencies before dependents, a cycle refused).
 */
const cli = useAdminCli();
const receivers: Receiver[] = [];
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
});
const monctl = (args: string[], input?: string, env?: Record<string, string>): Promise<RunResult> => cli.monctl(args, { input, env });
const ok = (r: RunResult) => expect(r.code, r.stderr).toBe(0);
const file = (name: string, text: string) => {
  const path = join(cli.home.dir, name);
  writeFileSync(path, text);
  return path;
};
const get = async (kind: string, name: string) => {
  const r = await monctl([kind, 'get', name, '-o', 'json']);
  ok(r);
  return r.json();
};

/** Each type: its flags, the secret lines piped in, what `get` shows, and the DESTINATION cell. */
const TYPES = [
  [
    'DISCORD',
    [],
    'https://discord.test/api/webhooks/1/s3cret-discord',
    { secrets: { url: true }, config: { origin: 'https://discord.test' } },
  ],
  ['TEAMS', [], 'https://teams.test/workflows/s3cret-teams', { secrets: { url: true } }],
  ['GOOGLE-CHAT', [], 'https://chat.test/v1/spaces/AAA/messages?key=s3cret-gchat', { secrets: { url: true } }],
  ['TELEGRAM', ['--chat-id', '-1001234', '--api-url', 'https://tg.test'], '123:s3cret-telegram', { config: { chatId: '-1001234' } }],
  ['PAGERDUTY', [], 's3cretroutingkey0000000000000000', { secrets: { routingKey: true } }],
  ['OPSGENIE', ['--region', 'eu'], 's3cret-genie-key', { config: { region: 'EU' }, secrets: { apiKey: true } }],
  [
    'PUSHOVER',
    ['--priority', '2', '--retry-seconds', '60', '--expire-seconds', '600'],
    'us3cretuserkey0000000000000000\nas3cretapptoken000000000000000',
    { config: { priority: 2, retrySeconds: 60, expireSeconds: 600 }, secrets: { userKey: true, token: true } },
  ],
  ['GOTIFY', ['--url', 'https://gotify.test', '--priority', '8'], 's3cret-gotify', { config: { url: 'https://gotify.test', priority: 8 } }],
  [
    'MATRIX',
    ['--homeserver', 'https://matrix.test', '--room-id', '!ops:matrix.test'],
    's3cret-matrix',
    { config: { homeserver: 'https://matrix.test', roomId: '!ops:matrix.test' }, secrets: { token: true } },
  ],
] as const;

describe('monctl notifiers: the channel types', () => {
  it('add takes each type its flags, the secrets from stdin; get never shows them; list shows where each sends', async () => {
    for (const [type, flags, secrets, shown] of TYPES) {
      const name = `n-${type.toLowerCase()}`;
      const add = await monctl(['notifiers', 'add', name, '--type', type, ...flags, '-o', 'json'], `${secrets}\n`);
      ok(add);
      expect(add.json()).toMatchObject({ name, type: type.replace('-', '_'), ...shown });
      expect(add.stdout).not.toMatch(/s3cret/);
    }
    const list = await monctl(['notifiers', 'list']);
    ok(list);
    expect(list.stdout).not.toMatch(/s3cret/);
    const row = (name: string) => list.stdout.split('\n').find((l) => l.includes(`\t${name}\t`)) ?? '';
    expect(row('n-discord')).toMatch(/https:\/\/discord\.test\/… \(secret URL\)/);
    expect(row('n-telegram')).toMatch(/https:\/\/tg\.test -> chat -1001234/);
    expect(row('n-pagerduty')).toMatch(/https:\/\/events\.pagerduty\.com/);
    expect(row('n-opsgenie')).toMatch(/https:\/\/api\.eu\.opsgenie\.com/);
    expect(row('n-pushover')).toMatch(/https:\/\/api\.pushover\.net\tuserKey,token/);
    expect(row('n-gotify')).toMatch(/https:\/\/gotify\.test/);
    expect(row('n-matrix')).toMatch(/https:\/\/matrix\.test -> !ops:matrix\.test/);
  });

  it('refuses a flag the type does not take, a secret URL as a flag, a bad number, a missing secret (exit 2, nothing created)', async () => {
    const cases: Array<[string[], string | undefined, RegExp]> = [
      [['--type', 'DISCORD', '--chat-id', '1'], 'https://d.test/x', /--chat-id is for TELEGRAM, not DISCORD/],
      [['--type', 'DISCORD', '--url', 'https://d.test/x'], undefined, /DISCORD webhook URL is a secret: pipe it in/],
      [['--type', 'SLACK', '--topic', 't'], 'https://s.test/x', /--topic is for NTFY, not SLACK/],
      [['--type', 'PUSHOVER', '--retry-seconds', '5'], 'u\nt', /--retry-seconds must be a number of seconds from 30 to 10800, not "5"/],
      [['--type', 'PUSHOVER'], 'only-the-user-key', /Pushover application token is missing/],
    ];
    for (const [args, input, message] of cases) {
      const r = await monctl(['notifiers', 'add', 'refused', ...args], input);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    expect((await monctl(['notifiers', 'get', 'refused'])).code).toBe(3);
  });

  it('update: a new routing key with --with-routing-key; a new apiUrl needs the secret again, and takes it', async () => {
    ok(await monctl(['notifiers', 'update', 'n-pagerduty', '--with-routing-key'], 's3cretroutingkey2000000000000000\n'));
    const moved = await monctl(['notifiers', 'update', 'n-pagerduty', '--api-url', 'https://pd-proxy.test']);
    expect(moved.code).toBe(1);
    expect(moved.stderr).toMatch(/config\.routingKey: give it again/);
    ok(
      await monctl(
        ['notifiers', 'update', 'n-pagerduty', '--api-url', 'https://pd-proxy.test', '--with-routing-key'],
        'k3000000000000000000000000000000\n',
      ),
    );
    expect(await get('notifiers', 'n-pagerduty')).toMatchObject({ config: { apiUrl: 'https://pd-proxy.test' } });
    const foreign = await monctl(['notifiers', 'update', 'n-pagerduty', '--with-api-key'], 'x\n');
    expect(foreign.code).toBe(2);
    expect(foreign.stderr).toMatch(/--with-api-key is for OPSGENIE, not PAGERDUTY/);
  });
});

describe('completion', () => {
  it("bash offers the types after notifiers add --type, each type's flags and the --with-… secrets", async () => {
    const script = await monctl(['completion', 'bash']);
    ok(script);
    expect(script.stdout).toMatch(/"notifiers add"\) words="[^"]*--chat-id [^"]*--homeserver --room-id [^"]*--title-template/);
    expect(script.stdout).toMatch(
      /"notifiers update"\) words="[^"]*--no-title-template [^"]*--with-routing-key --with-api-key --with-user-key/,
    );
    expect(script.stdout).toMatch(/"resources add"\) words="[^"]*--severity --depends-on/);
    const complete = (words: string) =>
      new Promise<string>((resolve, reject) => {
        const cword = words.split(' ').length - 1;
        const sh = `${script.stdout}\nCOMP_WORDS=(${words}); COMP_CWORD=${cword}; _monctl; echo "\${COMPREPLY[@]}"`;
        execFile('bash', ['-c', sh], (err, stdout) => (err ? reject(err) : resolve(stdout.trim())));
      });
    expect(await complete('monctl notifiers add x --type G')).toBe('GOTIFY GOOGLE_CHAT');
    expect(await complete('monctl notifiers preview x --event INCIDENT_R')).toBe('INCIDENT_RESOLVED');
    expect(await complete('monctl alert-rules add x --severity-override n')).toBe('none');
  });
});

describe('monctl notifiers: templates, test --event, preview', () => {
  it('--title-template @FILE and --body-template set them; preview renders them; --no-title-template removes it', async () => {
    const hook = await startReceiver(() => ({ status: 204 }));
    receivers.push(hook);
    const title = file('title.liquid', '{{ count }} alert(s): {{ alert.subject.name }}');
    ok(
      await monctl([
        'notifiers',
        'add',
        'tpl',
        '--type',
        'WEBHOOK',
        '--url',
        hook.url,
        '--title-template',
        `@${title}`,
        '--body-template',
        'Kind {{ alert.kind }}',
        '--output-file',
        join(cli.home.dir, 'tpl.secret'),
      ]),
    );
    expect(await get('notifiers', 'tpl')).toMatchObject({
      titleTemplate: '{{ count }} alert(s): {{ alert.subject.name }}',
      bodyTemplate: 'Kind {{ alert.kind }}',
    });
    const preview = await monctl(['notifiers', 'preview', 'tpl', '--event', 'incident-opened']);
    ok(preview);
    expect(preview.stdout).toMatch(/^1 alert\(s\): .+\n\n.*Kind INCIDENT_OPENED/s);
    const tried = await monctl([
      'notifiers',
      'preview',
      'tpl',
      '--event',
      'INCIDENT_RESOLVED',
      '--body-template',
      'Now {{ tone }}',
      '-o',
      'json',
    ]);
    ok(tried);
    expect(tried.json()).toMatchObject({ body: expect.stringContaining('Now recovery'), templateError: null });
    const broken = await monctl(['notifiers', 'preview', 'tpl', '--body-template', '{{ alert.kind | no_such_filter }}']);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(/The template failed, so this is the default message: /);

    const test = await monctl(['notifiers', 'test', 'tpl', '--event', 'INCIDENT_OPENED']);
    ok(test);
    expect(test.stdout).toMatch(/^Delivered a sample INCIDENT_OPENED to tpl \(status 204, \d+ ms\)\.\n$/);
    expect(JSON.parse(hook.received.at(-1)!.body).data.items[0]).toMatchObject({ kind: 'INCIDENT_OPENED' });

    ok(await monctl(['notifiers', 'update', 'tpl', '--no-title-template', '--body-template', '']));
    expect(await get('notifiers', 'tpl')).toMatchObject({ titleTemplate: null, bodyTemplate: null });
    const bad = await monctl(['notifiers', 'test', 'tpl', '--event', 'SOMETHING']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--event must be one of INCIDENT_OPENED, /);
  });
});

describe('severity and dependencies', () => {
  it('resources add|update --severity and --depends-on; get shows them; --depends-on "" removes them', async () => {
    ok(await monctl(['resources', 'add', 'db', '--type', 'TCP', '--target', '127.0.0.1:1', '--inactive']));
    ok(await monctl(['resources', 'add', 'cache', '--type', 'TCP', '--target', '127.0.0.1:2', '--inactive', '--severity', 'info']));
    ok(
      await monctl([
        'resources',
        'add',
        'api',
        '--target',
        'http://127.0.0.1:1/',
        '--inactive',
        '--severity',
        'WARNING',
        '--depends-on',
        'db,cache',
      ]),
    );
    expect(await get('resources', 'api')).toMatchObject({
      severity: 'warning',
      dependsOn: [expect.objectContaining({ name: 'db' }), expect.objectContaining({ name: 'cache' })],
    });
    const shown = await monctl(['resources', 'get', 'api']);
    expect(shown.stdout).toMatch(/^SEVERITY\twarning$/m);
    expect(shown.stdout).toMatch(/^DEPENDS ON\tdb,cache$/m);
    ok(await monctl(['resources', 'update', 'api', '--depends-on', '', '--severity', 'critical']));
    expect(await get('resources', 'api')).toMatchObject({ severity: 'critical', dependsOn: [] });
    const cycle = await monctl(['resources', 'update', 'db', '--depends-on', 'db']);
    expect(cycle.code).toBe(1);
    expect(cycle.stderr).toMatch(/--depends-on/);
    const bad = await monctl(['resources', 'update', 'api', '--severity', 'high']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--severity must be one of critical, warning, info, not "high"/);
  });

  it('alert-rules --severities and --severity-override; update keeps them unless given; none removes the override', async () => {
    ok(
      await monctl([
        'alert-rules',
        'add',
        'chat-warnings',
        '--event',
        'INCIDENT_OPENED',
        '--notifier',
        'n-discord',
        '--severities',
        'warning,info',
        '--severity-override',
        'warning',
      ]),
    );
    expect(await get('alert-rules', 'chat-warnings')).toMatchObject({ severities: ['warning', 'info'], severityOverride: 'warning' });
    ok(await monctl(['alert-rules', 'update', 'chat-warnings', '--repeat', '0']));
    expect(await get('alert-rules', 'chat-warnings')).toMatchObject({ severities: ['warning', 'info'], severityOverride: 'warning' });
    ok(await monctl(['alert-rules', 'update', 'chat-warnings', '--severity-override', 'none']));
    expect(await get('alert-rules', 'chat-warnings')).toMatchObject({ severityOverride: null });
    const bad = await monctl(['alert-rules', 'update', 'chat-warnings', '--severities', 'urgent']);
    expect(bad.code).toBe(2);
  });
});

describe('apply -f', () => {
  const spec = `
resources:
  - name: web
    type: HTTP
    target: http://127.0.0.1:1/web
    active: false
    severity: warning
    dependsOn: [router]
  - name: router
    type: TCP
    target: 127.0.0.1:3
    active: false
    severity: critical
notifiers:
  - name: pager
    type: PAGERDUTY
    routingKey: \${PD_KEY}
    apiUrl: https://pd.test
    titleTemplate: "{{ alert.severity }}: {{ alert.subject.name }}"
  - name: push
    type: PUSHOVER
    userKey: \${PO_USER}
    token: \${PO_TOKEN}
    priority: 2
    retrySeconds: 120
alertRules:
  - name: page-critical
    events: [INCIDENT_OPENED, INCIDENT_RESOLVED]
    notifiers: [pager, push]
    severities: [critical]
    severityOverride: null
`;
  const env = {
    PD_KEY: 's3cretpd000000000000000000000000',
    PO_USER: 'us3cretuser0000000000000000000',
    PO_TOKEN: 'as3crettoken000000000000000000',
  };

  it('creates dependencies before their dependents, with every field; a second run changes only the secrets', async () => {
    const path = file('channels.yaml', spec);
    const first = await monctl(['apply', '-f', path], undefined, env);
    ok(first);
    expect(first.stdout.indexOf('resource router')).toBeLessThan(first.stdout.indexOf('resource web'));
    expect(await get('resources', 'web')).toMatchObject({ severity: 'warning', dependsOn: [expect.objectContaining({ name: 'router' })] });
    expect(await get('notifiers', 'pager')).toMatchObject({
      config: { apiUrl: 'https://pd.test' },
      secrets: { routingKey: true },
      titleTemplate: '{{ alert.severity }}: {{ alert.subject.name }}',
    });
    expect(await get('notifiers', 'push')).toMatchObject({
      config: { priority: 2, retrySeconds: 120 },
      secrets: { userKey: true, token: true },
    });
    expect(await get('alert-rules', 'page-critical')).toMatchObject({ severities: ['critical'], severityOverride: null });
    const again = await monctl(['apply', '-f', path, '--dry-run'], undefined, env);
    ok(again);
    expect(again.stdout).not.toMatch(/resource|alert rule|titleTemplate|priority/);
    // Only the secrets differ: no update, they are sent again (reads never show them).
    expect(again.stdout).toMatch(/^No changes/);
    expect(again.stdout).toMatch(/Secrets would be sent again.*notifier pager, notifier push/);
  });

  it('refuses a cycle, a literal secret and an unknown dependency before any request (exit 2 / 1)', async () => {
    const cycle = file('cycle.yaml', spec.replace('severity: critical', 'severity: critical\n    dependsOn: [web]'));
    const r = await monctl(['apply', '-f', cycle], undefined, env);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/dependsOn: a cycle: (web -> router -> web|router -> web -> router)/);
    const literal = await monctl(['apply', '-f', file('literal.yaml', spec.replace('${PD_KEY}', 'plain-key'))], undefined, env);
    expect(literal.code).toBe(2);
    expect(literal.stderr).toMatch(/notifiers\[0\]\.routingKey: is a secret: write it as a \$\{ENV_VAR\} reference/);
    const unknown = await monctl(
      ['apply', '-f', file('unknown.yaml', spec.replace('dependsOn: [router]', 'dependsOn: [nowhere]'))],
      undefined,
      env,
    );
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/resources web: dependency "nowhere" is neither in the file nor on the server/);
  });
});
