import { createSocket } from 'node:dgram';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { statusColumns } from '../../cli/tui/status-view.tsx';
import { RESOURCE_TYPES } from '../../src/api/kinds.ts';
import { type RunResult, useAdminCli } from './run.ts';

/**
 * The CLI of the protocol checks (docs/API.md#check-types): each type's flags reach the daemon
 * as the type's option object (read back through the API), a flag of another type is a usage
 * error before any request, update merges as PATCH does, `get` shows a line per option, and
 * `apply -f` takes the same objects without spurious updates. The probes are other work: this
 * file tests what the CLI sends and shows, not verdicts (every resource here is --inactive).
 */
const cli = useAdminCli();
const { monctl } = cli;

const ok = (res: RunResult) => expect(res.code, `${res.stdout}\n${res.stderr}`).toBe(0);
const admin = async (name: string) => {
  const res = await monctl(['resources', 'get', name, '-o', 'json']);
  ok(res);
  return res.json();
};
const file = (name: string, text: string) => {
  const path = join(cli.home.dir, name);
  writeFileSync(path, text);
  return path;
};
/** CLI processes a few at a time: one after another they take most of a timeout on a busy machine. */
async function batched<T>(items: T[], run: (item: T) => Promise<RunResult>): Promise<RunResult[]> {
  const out: RunResult[] = [];
  for (let i = 0; i < items.length; i += 4) out.push(...(await Promise.all(items.slice(i, i + 4).map(run))));
  return out;
}

/** A resource of each type, its flags and the object the daemon keeps (defaults filled in). */
const CASES: Array<{ name: string; type: string; target: string; flags: string[]; stored: Record<string, unknown> }> = [
  {
    name: 'dns-mx',
    type: 'DNS',
    target: 'example.test',
    flags: ['--record-type', 'mx', '--resolver', '127.0.0.1:5353', '--dns-tcp'],
    stored: { dns: { recordType: 'MX', resolver: '127.0.0.1:5353', transport: 'tcp' } },
  },
  {
    name: 'ping-host',
    type: 'PING',
    target: '127.0.0.1',
    flags: ['--count', '5', '--ping-interval', '0.5s', '--ipv4'],
    stored: { ping: { count: 5, intervalMs: 500, family: 'ipv4' } },
  },
  {
    name: 'tls-smtp',
    type: 'TLS',
    target: 'mail.example.test:587',
    flags: ['--starttls', 'SMTP', '--sni', 'mx.example.test', '--min-tls', '1.3', '--skip-tls'],
    stored: { tls: { starttls: 'smtp', sni: 'mx.example.test', minVersion: 'TLSv1.3' }, skipTLS: true },
  },
  {
    name: 'udp-echo',
    type: 'UDP',
    target: '127.0.0.1:7',
    flags: ['--send-hex', '0A 0b:FF'],
    stored: { udp: { send: '0a0bff', sendEncoding: 'hex' } },
  },
  {
    name: 'tcp-redis',
    type: 'TCP',
    target: '127.0.0.1:6379',
    flags: ['--send', 'PING\r\n', '--expect-regex', '^\\+PONG'],
    stored: { tcp: { send: 'PING\r\n', sendEncoding: 'text', expect: '^\\+PONG', expectKind: 'regex' } },
  },
  {
    name: 'grpc-health',
    type: 'GRPC',
    target: '127.0.0.1:50051',
    flags: ['--grpc-service', 'pkg.Svc', '--grpc-tls'],
    stored: { grpc: { service: 'pkg.Svc', tls: true } },
  },
  {
    name: 'ws-feed',
    type: 'WEBSOCKET',
    target: 'ws://127.0.0.1:8080/feed',
    flags: ['--ws-header', 'X-Token: abc', '--ws-header', 'Origin=https://example.test', '--send', 'hello'],
    stored: { websocket: { headers: { 'X-Token': 'abc', Origin: 'https://example.test' }, send: 'hello' } },
  },
  { name: 'ssh-host', type: 'SSH', target: '127.0.0.1:22', flags: [], stored: {} },
];

describe('resources add|update|get|list: the protocol check types', { timeout: 120_000 }, () => {
  it("each type's flags become its option object, read back through the API; get shows a line per option", async () => {
    const added = await batched(CASES, (c) =>
      monctl(['resources', 'add', c.name, '--type', c.type, '--target', c.target, '--inactive', ...c.flags]),
    );
    added.forEach(ok);
    for (const c of CASES) {
      const got = await admin(c.name);
      expect(got, c.name).toMatchObject({ resourceType: c.type, target: c.target, ...c.stored });
      // Only the type's own object.
      for (const other of ['dns', 'ping', 'tls', 'udp', 'tcp', 'grpc', 'websocket'])
        if (!(other in c.stored)) expect(got[other], `${c.name}: ${other}`).toBeUndefined();
    }

    const [dns, tcp, ws, ssh] = await Promise.all(
      ['dns-mx', 'tcp-redis', 'ws-feed', 'ssh-host'].map((n) => monctl(['resources', 'get', n])),
    );
    for (const line of [/^RECORD TYPE\tMX$/m, /^RESOLVER\t127\.0\.0\.1:5353$/m, /^TRANSPORT\ttcp$/m]) expect(dns.stdout).toMatch(line);
    // Another type's lines are left out, and so are HTTP's.
    expect(dns.stdout).not.toMatch(/^(SNI|SEND|EXPECT|ECHOES|GRPC TLS)\t/m);
    expect(tcp.stdout).toMatch(/^SEND\t"PING\\r\\n"$/m);
    expect(tcp.stdout).toMatch(/^EXPECT\tregex \^\\\+PONG$/m);
    expect(ws.stdout).toMatch(/^WS HEADERS\tX-Token: abc,Origin: https:\/\/example\.test$/m);
    expect(ws.stdout).toMatch(/^SEND\t"hello"$/m);
    expect(ssh.stdout).toMatch(/^TYPE\tSSH$/m);
    expect(ssh.stdout).not.toMatch(/^(RECORD TYPE|SEND|EXPECT|STARTTLS)\t/m);

    const list = await monctl(['resources', 'list']);
    ok(list);
    for (const c of CASES) expect(list.stdout).toMatch(new RegExp(`^\\d+\\t${c.name}\\t${c.type}\\t`, 'm'));
  });

  it('update merges the fields given, --no-… and --reset-options go back to the defaults, --type takes the new type', async () => {
    ok(await monctl(['resources', 'add', 'dns-up', '--type', 'DNS', '--target', 'example.test', '--inactive', '--record-type', 'TXT']));
    // Without --type, the stored type decides which flags are good.
    ok(await monctl(['resources', 'update', 'dns-up', '--resolver', '10.0.0.1:53']));
    expect((await admin('dns-up')).dns).toEqual({ recordType: 'TXT', resolver: '10.0.0.1:53', transport: 'udp' });
    ok(await monctl(['resources', 'update', 'dns-up', '--no-resolver', '--dns-tcp']));
    expect((await admin('dns-up')).dns).toEqual({ recordType: 'TXT', resolver: null, transport: 'tcp' });
    ok(await monctl(['resources', 'update', 'dns-up', '--reset-options']));
    expect((await admin('dns-up')).dns).toEqual({ recordType: 'A', resolver: null, transport: 'udp' });

    const wrong = await monctl(['resources', 'update', 'dns-up', '--sni', 'x.test']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/--sni is for TLS checks, not DNS/);

    // A new type: its own flags, and the old type's options are gone.
    ok(await monctl(['resources', 'update', 'dns-up', '--type', 'TCP', '--target', '127.0.0.1:25', '--expect', '220 ']));
    const tcp = await admin('dns-up');
    expect(tcp).toMatchObject({ resourceType: 'TCP', tcp: { send: null, expect: '220 ', expectKind: 'text' } });
    expect(tcp.dns).toBeUndefined();
    ok(await monctl(['resources', 'update', 'dns-up', '--send-hex', '50494e47', '--no-expect']));
    expect((await admin('dns-up')).tcp).toEqual({ send: '50494e47', sendEncoding: 'hex', expect: null, expectKind: 'text' });

    ok(
      await monctl([
        'resources',
        'add',
        'ws-up',
        '--type',
        'WEBSOCKET',
        '--target',
        'ws://127.0.0.1:1/',
        '--inactive',
        '--ws-header',
        'A: 1',
      ]),
    );
    ok(await monctl(['resources', 'update', 'ws-up', '--ws-header', 'B: 2']));
    expect((await admin('ws-up')).websocket).toEqual({ headers: { B: '2' }, send: null });
    ok(await monctl(['resources', 'update', 'ws-up', '--no-ws-headers', '--send', 'hi']));
    expect((await admin('ws-up')).websocket).toEqual({ headers: {}, send: 'hi' });
  });

  it('a flag of another type, or a bad value, exits 2 naming the flag before any request', async () => {
    const add = (type: string, target: string, ...flags: string[]) => [
      'resources',
      'add',
      'bad',
      '--type',
      type,
      '--target',
      target,
      '--inactive',
      ...flags,
    ];
    const cases: Array<[string[], RegExp]> = [
      [add('TLS', 'a.test:443', '--record-type', 'MX'), /--record-type is for DNS checks, not TLS/],
      [add('HTTP', 'http://a.test/', '--count', '3'), /--count is for PING checks, not HTTP/],
      [add('WEBSOCKET', 'ws://a.test/', '--send-hex', '00'), /--send-hex is for UDP or TCP checks, not WEBSOCKET/],
      [add('DNS', 'a.test', '--send', 'x'), /--send is for UDP, TCP or WEBSOCKET checks, not DNS/],
      [add('SSH', 'a.test:22', '--grpc-tls'), /--grpc-tls is for GRPC checks, not SSH/],
      [add('UDP', 'a.test:7', '--expect', 'x'), /--expect is for TCP checks, not UDP/],
      [add('DOCKER', 'alpine', '--starttls', 'smtp'), /--starttls is for TLS checks, not DOCKER/],
      [add('TCP', 'a.test:1', '--ws-header', 'A: 1'), /--ws-header is for WEBSOCKET checks, not TCP/],
      [add('UDP', 'a.test:7', '--skip-tls'), /--skip-tls is for HTTP, DOCKER, TCP, TLS, GRPC or WEBSOCKET checks, not UDP/],
      [add('DNS', 'a.test', '--record-type', 'XX'), /--record-type must be one of A, AAAA, CNAME/],
      [add('PING', 'a.test', '--count', '11'), /--count must be 1 to 10/],
      [add('PING', 'a.test', '--ping-interval', '5ms'), /--ping-interval must be whole milliseconds from 20ms to 1s/],
      [add('PING', 'a.test', '--ipv4', '--ipv6'), /give one of --ipv4, --ipv6/],
      [add('TLS', 'a.test:443', '--min-tls', '1.4'), /--min-tls must be one of TLSv1, TLSv1\.1/],
      [add('TLS', 'a.test:443', '--starttls', 'http'), /--starttls must be one of smtp, imap/],
      [add('UDP', 'a.test:7', '--send-hex', 'abc'), /--send-hex takes bytes in hex/],
      [add('TCP', 'a.test:1', '--expect', 'a', '--expect-regex', 'b'), /give one of --expect, --expect-hex, --expect-regex/],
      [add('TCP', 'a.test:1', '--expect-regex', '('), /--expect-regex: Invalid regular expression/],
      [add('GRPC', 'a.test:1', '--grpc-service', 'a/b'), /--grpc-service takes a service name/],
      [add('WEBSOCKET', 'ws://a.test/', '--ws-header', 'no value'), /--ws-header takes 'Name: value'/],
      [['resources', 'test', '--type', 'TLS', '--target', 'a.test:443', '--count', '2'], /--count is for PING checks, not TLS/],
    ];
    const results = await batched(cases, ([args]) => monctl(args));
    results.forEach((res, i) => {
      expect(res.code, `${cases[i][0].join(' ')}: ${res.stderr}`).toBe(2);
      expect(res.stderr).toMatch(cases[i][1]);
    });
    expect((await monctl(['resources', 'list', '-o', 'json'])).json().map((r: { name: string }) => r.name)).not.toContain('bad');
  });

  it("the daemon's 400 on an option names the flag typed, not the API's field", async () => {
    const big = await monctl([
      'resources',
      'add',
      'big',
      '--type',
      'UDP',
      '--target',
      '127.0.0.1:7',
      '--inactive',
      '--send',
      'x'.repeat(9000),
    ]);
    expect(big.code, big.stderr).toBe(1);
    expect(big.stderr).toMatch(/--send/);
    expect(big.stderr).not.toMatch(/udp\.send/);
  });

  it('resources test takes the same flags, and -f the same objects: the datagram sent is the one typed', async () => {
    // A real UDP echo server on loopback records what the check sends.
    const seen: Buffer[] = [];
    const echo = createSocket('udp4');
    echo.on('message', (msg, from) => {
      seen.push(msg);
      echo.send(msg, from.port, from.address);
    });
    await new Promise<void>((resolve) => echo.bind(0, '127.0.0.1', resolve));
    const target = `127.0.0.1:${echo.address().port}`;
    try {
      const flags = await monctl(['resources', 'test', '--type', 'UDP', '--target', target, '--send-hex', '50 49 4e 47', '-o', 'json']);
      expect(flags.code, flags.stderr).toBe(0);
      expect(flags.json()).toMatchObject({ status: 'AVAILABLE' });
      const path = file('one.yaml', `name: t\ntype: UDP\ntarget: ${target}\nudp: {send: "hi"}\n`);
      const fromFile = await monctl(['resources', 'test', '-f', path, '-o', 'json']);
      expect(fromFile.code, fromFile.stderr).toBe(0);
      expect(seen.map((b) => b.toString())).toEqual(['PING', 'hi']);
    } finally {
      echo.close();
    }
    // A DNS question to a closed loopback port: the body is accepted (a 400 would exit 1, a bad flag 2).
    const dns = await monctl([
      'resources',
      'test',
      '--type',
      'DNS',
      '--target',
      'example.test',
      '--record-type',
      'SOA',
      '--resolver',
      '127.0.0.1:9',
    ]);
    expect([0, 5], dns.stderr).toContain(dns.code);
  });
});

describe('apply -f: the protocol check types', { timeout: 120_000 }, () => {
  const spec = (dnsType: string) => `resources:
  - name: a-dns
    type: DNS
    target: example.test
    dns: {recordType: ${dnsType}}
    active: false
  - name: a-ping
    type: PING
    target: 127.0.0.1
    ping: {count: 2}
    active: false
  - name: a-tls
    type: TLS
    target: mail.example.test:465
    tls: {minVersion: TLSv1.3, sni: mx.example.test}
    active: false
  - name: a-udp
    type: UDP
    target: 127.0.0.1:7
    udp: {send: "0a0b", sendEncoding: hex}
    active: false
  - name: a-tcp
    type: TCP
    target: 127.0.0.1:6379
    tcp: {send: "PING\\r\\n", expect: "+PONG"}
    active: false
  - name: a-grpc
    type: GRPC
    target: 127.0.0.1:50051
    grpc: {tls: true}
    active: false
  - name: a-ws
    type: WEBSOCKET
    target: wss://127.0.0.1:8443/
    websocket: {headers: {X-A: "1"}}
    active: false
  - name: a-ssh
    type: SSH
    target: 127.0.0.1:2222
    active: false
`;

  it('creates each type with its object, re-applies as a no-op (defaults left out), and updates only what changed', async () => {
    const path = file('types.yaml', spec('MX'));
    const created = await monctl(['apply', '-f', path]);
    ok(created);
    expect(created.stdout).toMatch(/Applied: 8 created, 0 updated, 0 deleted/);
    expect(await admin('a-dns')).toMatchObject({ dns: { recordType: 'MX', resolver: null, transport: 'udp' } });
    expect(await admin('a-tcp')).toMatchObject({ tcp: { send: 'PING\r\n', sendEncoding: 'text', expect: '+PONG', expectKind: 'text' } });
    expect(await admin('a-ws')).toMatchObject({ websocket: { headers: { 'X-A': '1' }, send: null } });

    // The daemon fills in the defaults; the file leaves them out: nothing to do.
    const again = await monctl(['apply', '-f', path]);
    ok(again);
    expect(again.stdout).toMatch(/^No changes: the daemon already matches the file\./);

    const changed = await monctl(['apply', '-f', file('types2.yaml', spec('TXT')), '--dry-run', '-o', 'json']);
    ok(changed);
    expect(changed.json().changes).toEqual([{ action: 'update', kind: 'resource', name: 'a-dns', changes: ['dns.recordType'] }]);
    ok(await monctl(['apply', '-f', file('types3.yaml', spec('TXT'))]));
    // PATCH merged the one field: the others kept.
    expect((await admin('a-dns')).dns).toEqual({ recordType: 'TXT', resolver: null, transport: 'udp' });

    // A new type takes the file's object whole.
    const retyped = spec('TXT').replace(
      'type: SSH\n    target: 127.0.0.1:2222',
      'type: TCP\n    target: 127.0.0.1:2222\n    tcp: {expect: SSH-}',
    );
    const typed = await monctl(['apply', '-f', file('types4.yaml', retyped), '-o', 'json']);
    ok(typed);
    expect(typed.json().changes).toEqual([{ action: 'update', kind: 'resource', name: 'a-ssh', changes: ['type', 'tcp'] }]);
    expect(await admin('a-ssh')).toMatchObject({ resourceType: 'TCP', tcp: { send: null, expect: 'SSH-', expectKind: 'text' } });
  });

  it('an object of another type, or a bad field, is refused before any write, naming its path', async () => {
    const path = file(
      'bad.yaml',
      `resources:
  - name: b-tls
    type: TLS
    target: a.test:443
    dns: {recordType: MX}
  - name: b-ping
    type: PING
    target: a.test
    ping: {count: 11, colour: red}
  - name: b-ws
    type: WEBSOCKET
    target: http://a.test/
`,
    );
    const res = await monctl(['apply', '-f', path]);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/resources\[0\]\.dns: is for DNS resources/);
    expect(res.stderr).toMatch(/resources\[1\]\.ping\.count: must be an integer from 1 to 10/);
    expect(res.stderr).toMatch(/resources\[1\]\.ping\.colour: unknown field \(ping takes count, intervalMs, family\)/);
    expect(res.stderr).toMatch(/resources\[2\]\.target: must be a ws\(s\):\/\/ URL for WEBSOCKET/);
    expect((await monctl(['resources', 'list', '-o', 'json'])).json().map((r: { name: string }) => r.name)).not.toContain('b-tls');
  });
});

describe('status --watch', () => {
  it('shows every type whole in its TYPE column', () => {
    const type = statusColumns(0).find((c) => c.header === 'TYPE')!;
    for (const t of RESOURCE_TYPES) {
      const shown = String(
        type.cell(
          { id: 1, name: 'x', type: t, status: 'unknown', checkedAt: null, durationMs: null, message: null, recent: [] },
          type.width,
        ),
      );
      expect(shown.length, t).toBeLessThanOrEqual(type.width);
    }
  });
});

describe('help and completion', () => {
  it('list the new types and flags', async () => {
    const help = await monctl(['resources', 'add', '--help']);
    expect(help.stdout.replace(/\s+/g, ' ')).toMatch(/DNS, PING, TLS, UDP, GRPC, WEBSOCKET, SSH/);
    for (const flag of ['--record-type', '--ping-interval', '--starttls', '--send-hex', '--expect-regex', '--grpc-service', '--ws-header'])
      expect(help.stdout).toContain(flag);
    const bash = await monctl(['completion', 'bash']);
    expect(bash.stdout).toMatch(/"resources update"\) words="[^"]*--reset-options/);
    expect(bash.stdout).toMatch(/"resources add"\) words="[^"]*--record-type/);
  });
});
