import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAgents, type PoolFlags, poolBody } from '../../cli/commands/route-pool-flags.ts';
import { runMonctl, useAdminCli } from './run.ts';

/**
 * The CLI of route pools (docs/API.md#agent-pools): the pool, header-rule and health flags of
 * `routes add|update`, `routes get` and `list`, `routes test`, and agents and routes in `apply -f`.
 * One daemon; no agent process: pool members need not be connected for any of this.
 */
const cli = useAdminCli();
const { monctl } = cli;
/** No daemon: a bad flag value must fail before any request (one to port 1 would exit 1). */
const NOWHERE = { MONCTL_SERVER: 'http://127.0.0.1:1', MONCTL_API_KEY: 'x' };
const tsv = (text: string) =>
  text
    .trimEnd()
    .split('\n')
    .map((l) => l.split('\t'));
const file = (name: string, text: string) => {
  const path = join(cli.home.dir, name);
  writeFileSync(path, text);
  return path;
};

describe('monctl routes: pools, rules and health checks', () => {
  /** Agent ids by name. */
  const ids = new Map<string, number>();
  it('add with a pool of two agents, header rules and a health check; get and list show them', async () => {
    const made = await Promise.all(['pool-a', 'pool-b', 'pool-c'].map((name) => monctl(['agents', 'add', name, '-o', 'json'])));
    for (const r of made) ids.set(r.json().name, r.json().id);
    const add = await monctl([
      'routes',
      'add',
      'shop',
      '--agent',
      'pool-a',
      '--agent',
      'pool-b=http://127.0.0.1:8081',
      '--target',
      'http://127.0.0.1:8080',
      '--hostname',
      'shop.test',
      '--path-prefix',
      '/api',
      '--policy',
      'failover',
      '--affinity',
      'client-ip',
      '--set-header',
      'X-Env: prod',
      '--remove-header',
      'Cookie',
      '--set-response-header',
      'X-Served-By: monctl',
      '--remove-response-header',
      'Server',
      '--host-header',
      'internal.shop',
      '--strip-prefix',
      '--health-path',
      '/healthz',
      '--health-method',
      'head',
      '--health-interval',
      '15s',
      '--health-timeout',
      '3',
      '--health-expect',
      '200,204',
      '--health-condition',
      '[BODY].ok == true',
      '-o',
      'json',
    ]);
    expect(add.code, add.stderr).toBe(0);
    expect(add.json()).toMatchObject({
      agents: [
        { agentId: ids.get('pool-a'), target: null },
        { agentId: ids.get('pool-b'), target: 'http://127.0.0.1:8081' },
      ],
      policy: 'failover',
      affinity: 'client-ip',
      requestHeaders: { set: { 'X-Env': 'prod' }, remove: ['Cookie'] },
      responseHeaders: { set: { 'X-Served-By': 'monctl' }, remove: ['Server'] },
      hostHeader: 'internal.shop',
      preserveHost: false,
      stripPrefix: true,
      healthCheck: {
        path: '/healthz',
        method: 'HEAD',
        intervalSeconds: 15,
        timeoutSeconds: 3,
        expectStatus: ['200', '204'],
        conditions: ['[BODY].ok == true'],
      },
    });

    const get = await monctl(['routes', 'get', 'shop']);
    expect(get.code, get.stderr).toBe(0);
    expect(get.stdout).toMatch(/^AGENT\tpool-a,pool-b$/m);
    expect(get.stdout).toMatch(/^POLICY\tfailover$/m);
    expect(get.stdout).toMatch(/^REQUEST-HEADERS\tset X-Env: prod; remove Cookie$/m);
    expect(get.stdout).toMatch(/^HOST-HEADER\tinternal\.shop$/m);
    expect(get.stdout).toMatch(/^HEALTH-CHECK\tHEAD \/healthz every 15s, timeout 3s, expect 200,204, \[BODY\]\.ok == true$/m);
    // The pool's own table: each agent, not connected (no agent process), not yet checked.
    const pool = tsv(get.stdout.split('\nPOOL\n')[1]);
    expect(pool[0]).toEqual(['AGENT', 'CONNECTED', 'HEALTH', 'IN-ROTATION', 'IN-FLIGHT', 'REQUESTS', 'SHARE', 'TARGET']);
    expect(pool.slice(1)).toEqual([
      ['pool-a', 'false', 'UNKNOWN', 'false', '0', '0', '-', 'http://127.0.0.1:8080'],
      ['pool-b', 'false', 'UNKNOWN', 'false', '0', '0', '-', 'http://127.0.0.1:8081'],
    ]);
    expect((await monctl(['routes', 'get', 'shop', '-o', 'json'])).json().pool).toHaveLength(2);
  });

  it('update merges rules into the route, replaces the pool; list shows it compactly; --no-… forms undo', async () => {
    const upd = await monctl([
      'routes',
      'update',
      'shop',
      '--agent',
      'pool-c',
      '--agent',
      'pool-b',
      '--agent',
      'pool-a',
      '--set-header',
      'X-Team: web',
      '--remove-header',
      'X-Env',
      '--preserve-host',
      '--no-strip-prefix',
      '--health-interval',
      '1m',
      '-o',
      'json',
    ]);
    expect(upd.code, upd.stderr).toBe(0);
    expect(upd.json()).toMatchObject({
      agents: [{ agentId: ids.get('pool-c') }, { agentId: ids.get('pool-b'), target: null }, { agentId: ids.get('pool-a') }],
      requestHeaders: { set: { 'X-Team': 'web' }, remove: ['Cookie', 'X-Env'] },
      hostHeader: null,
      preserveHost: true,
      stripPrefix: false,
      healthCheck: { path: '/healthz', intervalSeconds: 60 },
    });
    const list = tsv((await monctl(['routes', 'list'])).stdout);
    expect(list.find((r) => r[1] === 'shop')?.[list[0].indexOf('AGENT')]).toBe('pool-c,pool-b +1');
    const off = await monctl(['routes', 'update', 'shop', '--no-health-check', '--no-header-rules', '--no-preserve-host', '-o', 'json']);
    expect(off.json()).toMatchObject({ healthCheck: null, requestHeaders: {}, responseHeaders: {}, preserveHost: false });
    // One agent alone is the seed's --agent: the pool becomes that agent.
    const one = await monctl(['routes', 'update', 'shop', '--agent', String(ids.get('pool-b')), '-o', 'json']);
    expect(one.json()).toMatchObject({ agentId: ids.get('pool-b'), agents: [{ agentId: ids.get('pool-b'), target: null }] });
  });

  it('bad flag values exit 2 naming the flag, before any request', async () => {
    const cases: Array<[PoolFlags, RegExp]> = [
      [{ policy: 'random' }, /--policy must be one of round-robin, least-outstanding, failover/],
      [{ affinity: 'cookie' }, /--affinity must be one of none, client-ip/],
      [{ setHeader: ['X-Env prod'] }, /--set-header takes "Name: value"/],
      [{ setHeader: ['Bad Name: x'] }, /--set-header needs a header name/],
      [{ removeResponseHeader: ['a b'] }, /--remove-response-header needs a header name/],
      [{ healthInterval: '0s' }, /--health-interval must be a duration/],
      [{ healthTimeout: '500ms' }, /--health-timeout must be a duration/],
      [{ healthExpect: ['200', '99'] }, /--health-expect takes status codes/],
      [{ healthMethod: 'FETCH' }, /--health-method must be one of GET/],
      [{ healthPath: 'healthz' }, /--health-path must be a path starting with \//],
      [{ healthUnhealthyAfter: '11' }, /--health-unhealthy-after must be a whole number from 1 to 10/],
      [{ healthCheck: false, healthPath: '/' }, /--no-health-check goes without the other --health-\* flags/],
      [{ hostHeader: 'a.test', preserveHost: true }, /--host-header or --preserve-host, not both/],
    ];
    for (const [flags, message] of cases)
      expect(() => poolBody(flags)).toThrow(expect.objectContaining({ exitCode: 2, message: expect.stringMatching(message) }));
    expect(() => parseAgents(['b='])).toThrow(/--agent b=: the target after = is empty/);
    expect(() => parseAgents(['a', 'a'])).toThrow(/--agent a is given twice/);
    // The real command: exit 2 with no daemon to reach (a request to port 1 would exit 1).
    const [add, test, completion] = await Promise.all([
      runMonctl(['routes', 'add', 'x', '--agent', 'a', '--target', 'http://127.0.0.1:9', '--health-expect', '200,99'], { env: NOWHERE }),
      runMonctl(['routes', 'test', 'shop.test', '--client-ip', '10.0.0.300'], { env: NOWHERE }),
      runMonctl(['completion', 'bash'], { env: NOWHERE }),
    ]);
    // Completion offers the new flags and their values.
    expect(completion.stdout).toMatch(/"routes update"\) words="[^"]*--set-header [^"]*--health-condition [^"]*--no-health-check/);
    expect(completion.stdout).toContain('"routes add --policy") words="round-robin least-outstanding failover"');
    expect([add.code, add.stderr]).toEqual([2, expect.stringMatching(/--health-expect takes status codes/)]);
    expect([test.code, test.stderr]).toEqual([2, expect.stringMatching(/--client-ip must be an IPv4 or IPv6 address/)]);
  });

  it('routes test names the route, the agent and the reasons; no match exits notFound', async () => {
    expect(
      (await monctl(['routes', 'add', 'docs', '--agent', 'pool-a', '--target', 'http://127.0.0.1:9', '--hostname', 'docs.test'])).code,
    ).toBe(0);
    const hit = await monctl(['routes', 'test', 'docs.test/guide/x']);
    expect(hit.code, hit.stderr).toBe(0);
    expect(hit.stdout).toMatch(/^Route: docs \(id \d+\)$/m);
    // pool-a has never connected: the edge would answer 503, and the reasons say why.
    expect(hit.stdout).toMatch(/^Agent: none in the rotation$/m);
    expect(hit.stdout).toMatch(/^ {2}- agent \d+: not connected, skipped$/m);
    expect(hit.stdout).toMatch(/^Why:\n {2}- /m);
    const json = await monctl(['routes', 'test', 'https://docs.test/', '--client-ip', '192.0.2.7', '-o', 'json']);
    expect(json.json()).toMatchObject({ routeName: 'docs', agentName: null, reasons: expect.any(Array) });
    const miss = await monctl(['routes', 'test', 'nowhere.test/x']);
    expect(miss.code).toBe(3); // ExitCode.notFound
    expect(miss.stdout).toMatch(/^No route matches nowhere\.test\/x\.\nWhy:\n {2}- .+/);
    expect((await monctl(['routes', 'test', 'nowhere.test', '-o', 'json'])).json()).toMatchObject({ routeId: null });
  });
});

const TUNNEL = `
agents:
  - name: edge-1
  - name: edge-2
routes:
  - name: web
    agents: [edge-1, {name: edge-2, target: "http://127.0.0.1:8082"}]
    target: http://127.0.0.1:8081
    hostname: Web.Test
    policy: least-outstanding
    affinity: client-ip
    basicUsers:
      - {username: alice, password: "\${WEB_ALICE}"}
    ipAllow: [10.1.2.3/8, 192.0.2.1]
    rateLimit: {perSecond: 5, burst: 10}
    requestHeaders: {set: {X-Env: prod}, remove: [Cookie]}
    responseHeaders: {set: {X-Frame-Options: DENY}}
    hostHeader: internal.web
    stripPrefix: true
    healthCheck: {path: /healthz, intervalSeconds: 5, expectStatus: ["200-299"], conditions: ["[STATUS] == 200"]}
  - name: db
    agents: [edge-2]
    target: 127.0.0.1:5432
    listenPort: 0
    healthCheck: {timeoutSeconds: 2}
`;

describe('monctl apply: agents and routes', () => {
  const env = { WEB_ALICE: 'alice-secret' };
  /** The file with the TCP route on a free port (the same one each time it is applied). */
  let tunnel = '';

  it('refuses bad tunnel fields with their paths, and agent tokens, before any request', async () => {
    const bad = file(
      'bad-tunnel.yaml',
      [
        'agents:',
        '  - {name: a1, token: abc}',
        'routes:',
        '  - name: r1',
        '    agents: [a1, a1]',
        '    target: http://127.0.0.1:1',
        '    hostname: r1.test',
        '    policy: random',
        '    requestHeaders: {set: {"Bad Name": x}}',
        '    basicUsers: [{username: bob, password: plain-text}]',
        '    healthCheck: {intervalSeconds: 0}',
        '  - name: r2',
        '    agents: [a1]',
        '    target: 127.0.0.1:1',
        '    listenPort: 7000',
        '    stripPrefix: true',
        '',
      ].join('\n'),
    );
    const res = await runMonctl(['apply', '-f', bad], { env: NOWHERE });
    expect(res.code).toBe(2);
    for (const line of [
      /^ {2}agents\[0\]\.token: unknown field \(apply never manages tokens/m,
      /^ {2}routes\[0\]\.agents\[1\]\.name: agent "a1" is in the pool twice$/m,
      /^ {2}routes\[0\]\.policy: must be one of round-robin, least-outstanding, failover$/m,
      /^ {2}routes\[0\]\.requestHeaders\.set\.Bad Name: /m,
      /^ {2}routes\[0\]\.basicUsers\[0\]\.password: is a secret: write it as a \$\{ENV_VAR\} reference/m,
      /^ {2}routes\[0\]\.healthCheck\.intervalSeconds: /m,
      /^ {2}routes\[1\]\.stripPrefix: only HTTP routes have it$/m,
    ])
      expect(res.stderr).toMatch(line);
  });

  it('--dry-run shows the plan and changes nothing; apply makes it', async () => {
    tunnel = TUNNEL.replace('listenPort: 0', `listenPort: ${await freePort()}`);
    const path = file('tunnel.yaml', tunnel);
    const dry = await monctl(['apply', '-f', path, '--dry-run'], { env });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/^\+ create agent edge-1$/m);
    expect(dry.stdout).toMatch(/^\+ create route web$/m);
    expect(dry.stdout).toMatch(/^Plan: 4 to create, 0 to update, 0 to delete \(dry run: nothing changed\)\.$/m);
    expect((await monctl(['routes', 'get', 'web'])).code).toBe(3);

    const applied = await monctl(['apply', '-f', path], { env });
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toMatch(/^Applied: 4 created, 0 updated, 0 deleted\.$/m);
    const web = (await monctl(['routes', 'get', 'web', '-o', 'json'])).json();
    expect(web).toMatchObject({
      hostname: 'web.test',
      policy: 'least-outstanding',
      affinity: 'client-ip',
      auth: 'basic',
      basicUsers: ['alice'],
      ipAllow: ['10.0.0.0/8', '192.0.2.1/32'],
      agents: [{ target: null }, { target: 'http://127.0.0.1:8082' }],
      requestHeaders: { set: { 'X-Env': 'prod' }, remove: ['Cookie'] },
      hostHeader: 'internal.web',
      stripPrefix: true,
      healthCheck: { path: '/healthz', intervalSeconds: 5 },
    });
    expect(web.pool.map((m: { name: string }) => m.name)).toEqual(['edge-1', 'edge-2']);
  });

  it('a second apply of the same file changes nothing; a change in it is one update naming the fields', async () => {
    const path = file('tunnel.yaml', tunnel);
    // Idempotent: the password cannot be compared (reads never return it), so it is sent again, and nothing else.
    const again = await monctl(['apply', '-f', path, '--dry-run', '-o', 'json'], { env });
    expect(again.json()).toEqual({ dryRun: true, changes: [], secretsSent: ['route web'] });
    const second = await monctl(['apply', '-f', path], { env });
    expect(second.stdout).toMatch(/^No changes: the daemon already matches the file\.$/m);

    // A change in the file is one update naming the fields.
    const changed = file('tunnel2.yaml', tunnel.replace('policy: least-outstanding', 'policy: failover'));
    const plan = await monctl(['apply', '-f', changed, '--dry-run'], { env });
    expect(plan.stdout).toMatch(/^~ update route web \(policy, passwords sent\)$/m);
  });

  it('--prune deletes the routes and agents the file does not name, saying which routes an agent takes', async () => {
    expect((await monctl(['agents', 'add', 'stray'])).code).toBe(0);
    expect(
      (await monctl(['routes', 'add', 'stray-site', '--agent', 'stray', '--target', 'http://127.0.0.1:9', '--hostname', 'stray.test']))
        .code,
    ).toBe(0);
    const agentsOnly = file('agents-only.yaml', 'agents:\n  - name: edge-1\n  - name: edge-2\n');
    // Without a routes section, no route is pruned; the stray agent's route goes with it and the plan says so.
    const plan = await monctl(['apply', '-f', agentsOnly, '--prune', '--dry-run']);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toMatch(/^- delete agent stray \(its routes go: stray-site\)$/m);
    expect(plan.stdout).not.toMatch(/delete route/);
    // A file without agents or routes sections prunes neither.
    const none = await monctl(['apply', '-f', file('groups.yaml', 'groups: []\n'), '--prune', '--dry-run']);
    expect(none.stdout).not.toMatch(/agent|route/);

    const pruned = await monctl(['apply', '-f', file('web-only.yaml', tunnel.replace(/ {2}- name: db[\s\S]*$/, '')), '--prune', '--yes'], {
      env,
    });
    expect(pruned.code, pruned.stderr).toBe(0);
    const routes = (await monctl(['routes', 'list', '-o', 'json'])).json().map((r: { name: string }) => r.name);
    const agents = (await monctl(['agents', 'list', '-o', 'json'])).json().map((a: { name: string }) => a.name);
    expect(routes).toEqual(['web']);
    expect(agents.sort()).toEqual(['edge-1', 'edge-2']);
  });
});

async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}
