/**
 * PING checks against real ICMP: loopback answers; a network namespace behind a veth pair (IPv4
 * and IPv6) drops echoes with nftables (all of them, every other one, every fourth); the datagram
 * and raw socket paths each run in a namespace of their own, where net.ipv4.ping_group_range says
 * which is allowed.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { icmpMode } from '../../src/probes/ping/pinger.ts';
import { createProbeRunner, type Prober } from '../../src/probes/runner.ts';
import type { PingOptions, ProbeInput, ProbeResult } from '../../src/probes/types.ts';
import { createNetNs, type NetNs } from './helpers/netns.ts';

const CHILD = fileURLToPath(new URL('./helpers/ping-child.ts', import.meta.url));
const FAST: PingOptions = { count: 3, intervalMs: 20, family: 'auto' };
// The namespace's addresses by what nftables does to the echoes sent to them.
const ANSWERS = 2;
const DROPS_ALL = 3;
const DROPS_HALF = 4;
const DROPS_QUARTER = 5;

let runner: Prober;
let ns: NetNs;

function input(target: string, options: Partial<PingOptions> = {}, conditions?: string[]): ProbeInput {
  return {
    resourceId: 1,
    type: 'PING',
    target,
    skipTLS: false,
    recursive: false,
    timeoutMs: 1_000,
    options: { ...FAST, ...options },
    conditions,
  };
}

/** The value a report's condition saw, e.g. `[PACKET_LOSS] (0) == 0` → `0`. */
function seen(result: ProbeResult, placeholder: string): string | undefined {
  const line = result.report?.conditions.find((c) => c.condition.startsWith(placeholder));
  return line ? /\(([^)]*)\)/.exec(line.message)?.[1] : undefined;
}

beforeAll(() => {
  runner = createProbeRunner({ timeoutMs: 1_000, credential: async () => undefined });
  ns = createNetNs({
    lastOctets: [ANSWERS, DROPS_ALL, DROPS_HALF, DROPS_QUARTER],
    nft: (n) => `table inet pingtest {
      chain input {
        type filter hook input priority 0; policy accept;
        ip daddr ${n.ip(DROPS_ALL)} icmp type echo-request drop
        ip6 daddr ${n.ip6(DROPS_ALL)} icmpv6 type echo-request drop
        ip daddr ${n.ip(DROPS_HALF)} icmp type echo-request numgen inc mod 2 == 0 drop
        ip daddr ${n.ip(DROPS_QUARTER)} icmp type echo-request numgen inc mod 4 == 0 drop
      }
    }`,
  });
});

afterAll(async () => {
  ns?.remove();
  await runner?.close();
});

describe('PING checks', () => {
  it('127.0.0.1 and ::1 answer every echo', async () => {
    const conditions = ['[CONNECTED] == true', '[PACKET_LOSS] == 0', '[RESPONSE_TIME] < 1000', '[IP] == any(127.0.0.1, ::1)'];
    for (const target of ['127.0.0.1', '::1']) {
      const result = await runner.probe(input(target, { count: 4 }, conditions), { report: true });
      expect(result, target).toMatchObject({ status: 'AVAILABLE', errorCode: null });
      expect(result.message).toContain(`4 of 4 echoes came back from ${target}`);
      expect(seen(result, '[PACKET_LOSS]')).toBe('0');
      expect(seen(result, '[IP]')).toBe(target);
      // [RESPONSE_TIME] shows whole ms (0 on loopback); the message has the average to the µs.
      expect(Number(/average ([\d.]+) ms/.exec(result.message)?.[1])).toBeGreaterThan(0);
    }
  });

  it('echoes the timeout leaves no room for are not sent, and not counted as lost', async () => {
    // 10 echoes 300 ms apart do not fit in the runner's 1,000 ms: the 4th would leave 100 ms for its reply.
    const result = await runner.probe(input('127.0.0.1', { count: 10, intervalMs: 300 }, ['[PACKET_LOSS] == 0']), { report: true });
    expect(result).toMatchObject({ status: 'AVAILABLE', errorCode: null });
    expect(seen(result, '[PACKET_LOSS]')).toBe('0');
    expect(result.message).toMatch(
      /^3 of 3 echoes came back from 127\.0\.0\.1 \(0 % lost\), average [\d.]+ ms; 7 not sent: the 1000 ms timeout left no room for them$/,
    );
  });

  it('an address whose echoes are all dropped: 100 % loss, PING_FAILED', async () => {
    const target = ns.ip(DROPS_ALL);
    const result = await runner.probe(input(target, {}, ['[CONNECTED] == true']), { report: true });
    expect(result).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'PING_FAILED', message: `no reply to 3 echoes from ${target}` });
    expect(seen(result, '[CONNECTED]')).toBe('false');
    // A condition on [PACKET_LOSS] decides instead of PING_FAILED (docs/API.md#check-types).
    const judged = await runner.probe(input(target, {}, ['[PACKET_LOSS] < 50']), { report: true });
    expect(judged).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONDITION_FAILED', message: '[PACKET_LOSS] (100) < 50' });
    // Its neighbour in the same namespace answers: the drop is nftables', not the route's.
    expect(await runner.probe(input(ns.ip(ANSWERS)))).toMatchObject({ status: 'AVAILABLE' });
  });

  it('the same over IPv6, beyond loopback', async () => {
    const dropped = await runner.probe(input(ns.ip6(DROPS_ALL), { count: 2 }));
    expect(dropped).toMatchObject({ errorCode: 'PING_FAILED', message: `no reply to 2 echoes from ${ns.ip6(DROPS_ALL)}` });
    const answered = await runner.probe(input(ns.ip6(ANSWERS), { count: 2, family: 'ipv6' }));
    expect(answered).toMatchObject({ status: 'AVAILABLE' });
    expect(answered.message).toContain(`2 of 2 echoes came back from ${ns.ip6(ANSWERS)}`);
  });

  it('[PACKET_LOSS] decides when a condition reads it, even with every echo lost', async () => {
    const result = await runner.probe(input(ns.ip(DROPS_ALL), { count: 1 }, ['[PACKET_LOSS] == 100']));
    expect(result).toMatchObject({ status: 'AVAILABLE', errorCode: null });
  });

  it('partial loss: AVAILABLE without conditions, and [PACKET_LOSS] < 50 judges it', async () => {
    const half = await runner.probe(input(ns.ip(DROPS_HALF), { count: 4 }, ['[PACKET_LOSS] < 50']), { report: true });
    expect(seen(half, '[PACKET_LOSS]')).toBe('50');
    expect(half).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONDITION_FAILED' });
    const plain = await runner.probe(input(ns.ip(DROPS_HALF), { count: 4 }));
    expect(plain).toMatchObject({ status: 'AVAILABLE' });
    expect(plain.message).toContain('2 of 4 echoes came back');
    const quarter = await runner.probe(input(ns.ip(DROPS_QUARTER), { count: 4 }, ['[PACKET_LOSS] < 50']), { report: true });
    expect(seen(quarter, '[PACKET_LOSS]')).toBe('25');
    expect(quarter).toMatchObject({ status: 'AVAILABLE' });
  });

  it('a name that does not resolve is CONNECTION_ERROR; the family option picks the address', async () => {
    const unknown = await runner.probe(input('no-such-host.invalid'));
    expect(unknown).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONNECTION_ERROR' });
    expect(unknown.message).toContain('does not resolve');
    expect(await runner.probe(input('::1', { family: 'ipv4' }))).toMatchObject({
      errorCode: 'CONNECTION_ERROR',
      message: '::1 is not an IPv4 address',
    });
  });

  it('400 echoes sent in one tick all come back: the replies wait in the socket until the loop drains it', async () => {
    // The kernel's default receive buffer holds 256 of them; the rest were dropped before the
    // socket asked for more (SO_RCVBUF).
    const targets = Array.from({ length: 400 }, (_, i) => `127.3.${i >> 8}.${i & 0xff}`);
    const results = await Promise.all(targets.map((t) => runner.probe(input(t, { count: 1, family: 'ipv4' }))));
    expect(results.filter((r) => r.status !== 'AVAILABLE').map((r) => r.message)).toEqual([]);
  });

  it('many checks at once against several addresses get their own replies', async () => {
    const targets = [...Array.from({ length: 12 }, (_, i) => `127.0.0.${i + 1}`), '::1', ns.ip(ANSWERS), ns.ip6(ANSWERS)];
    const checks = Array.from({ length: 120 }, (_, i) => targets[i % targets.length]);
    // The dropped address among them: its echoes share the socket and the sequence numbers.
    const [results, dropped] = await Promise.all([
      Promise.all(checks.map((t) => runner.probe(input(t, { count: 5 }, ['[PACKET_LOSS] == 0']), { report: true }))),
      Promise.all([ns.ip(DROPS_ALL), ns.ip6(DROPS_ALL), ns.ip(DROPS_ALL)].map((t) => runner.probe(input(t, { count: 5 })))),
    ]);
    results.forEach((r, i) => {
      expect(r, checks[i]).toMatchObject({ status: 'AVAILABLE' });
      expect(r.message).toContain(`5 of 5 echoes came back from ${checks[i]}`);
      expect(seen(r, '[PACKET_LOSS]')).toBe('0');
    });
    for (const d of dropped) expect(d).toMatchObject({ errorCode: 'PING_FAILED' });
  });
});

describe('ICMP sockets', () => {
  /** Runs the checks in a child process in a namespace of its own. */
  async function inNamespace(pingGroupRange: string, wrap: string[] = []) {
    const own = createNetNs({ pingGroupRange });
    try {
      const run = await own.node(
        CHILD,
        [
          JSON.stringify([
            ['127.0.0.1', FAST],
            ['::1', FAST],
          ]),
        ],
        wrap,
      );
      expect(run.code, run.stderr).toBe(0);
      return { ...(JSON.parse(run.stdout) as { results: ProbeResult[]; modes: Record<string, string | null> }), stderr: run.stderr };
    } finally {
      own.remove();
    }
  }

  it('datagram ICMP where ping_group_range includes the group (no privilege used)', async () => {
    const { results, modes } = await inNamespace('0 2147483647');
    expect(modes).toEqual({ ipv4: 'datagram', ipv6: 'datagram' });
    for (const r of results) expect(r).toMatchObject({ status: 'AVAILABLE' });
  });

  it('raw sockets where it does not', async () => {
    const { results, modes } = await inNamespace('1 0');
    expect(modes).toEqual({ ipv4: 'raw', ipv6: 'raw' });
    for (const r of results) expect(r).toMatchObject({ status: 'AVAILABLE' });
  });

  it('neither: the check says why, and the process logs it once', async () => {
    const { results, modes, stderr } = await inNamespace('1 0', ['setpriv', '--bounding-set', '-net_raw', '--inh-caps', '-net_raw']);
    expect(modes).toEqual({ ipv4: null, ipv6: null });
    for (const r of results) {
      expect(r).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONNECTION_ERROR' });
      expect(r.message).toContain('ICMP sockets are not allowed: datagram ICMP EACCES (net.ipv4.ping_group_range');
      expect(r.message).toContain('raw EPERM (needs CAP_NET_RAW)');
    }
    expect(stderr.match(/MONCTL_ICMP/g)).toHaveLength(1);
  });

  it("the shipped sysctl drop-in lets the units' dynamic user ping, without any capability", async () => {
    const conf = readFileSync(new URL('../../contrib/sysctl.d/60-monctl-ping.conf', import.meta.url), 'utf8');
    const range = /^net\.ipv4\.ping_group_range = (\d+ \d+)$/m.exec(conf)?.[1] ?? '';
    // 61184 is the first uid/gid systemd gives a DynamicUser= service.
    const asService = ['setpriv', '--reuid=61184', '--regid=61184', '--clear-groups', '--inh-caps=-all', '--bounding-set=-all'];
    const { results, modes } = await inNamespace(range, asService);
    expect(modes).toEqual({ ipv4: 'datagram', ipv6: 'datagram' });
    for (const r of results) expect(r).toMatchObject({ status: 'AVAILABLE' });
  });

  it('this process opened one socket per family', () => {
    expect(icmpMode(4)).not.toBeNull();
    expect(icmpMode(6)).not.toBeNull();
  });
});
