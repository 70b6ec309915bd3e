import { createSocket, type Socket as Datagrams } from 'node:dgram';
import { createServer, type Server, type Socket } from 'node:net';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProbeServer } from '../../cli/agent/probes.ts';
import { normaliseOptions, type OptionedType } from '../../daemon/probes/check-options.ts';
import { DAEMON_LOCATION } from '../../daemon/probes/locations.ts';
import { checkAt, type RoundDeps } from '../../daemon/probes/rounds.ts';
import { nothingConnected } from '../../daemon/tunnel-control.ts';
import { PROBE_PROTOCOL } from '../../src/tunnel/probe-protocol.ts';
import type { ProbeInput, ResourceType } from '../../src/probes/types.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { agentSide, daemonSide } from '../locations/probe-pair.ts';
import { closeAll, muxPair } from '../tunnel/mux-helpers.ts';
import { openContext, type TestContext } from './helpers/context.ts';
import { type Dnsmasq, startDnsmasq } from './helpers/dnsmasq.ts';

/**
 * DNS, UDP and TCP send/expect end to end: resources created through a real daemon's API with
 * their options, checked on schedule and on demand against real loopback servers (dnsmasq, a UDP
 * echo server, a Redis-like TCP server), and the same checks at an agent location over a real mux
 * session, with the same verdicts as at the daemon.
 */
let dnsmasq: Dnsmasq;
let echo: Datagrams;
let redis: Server;
const sockets = new Set<Socket>();
let daemon: TestDaemon;

beforeAll(async () => {
  dnsmasq = await startDnsmasq();
  echo = createSocket('udp4');
  echo.on('message', (msg, rinfo) => echo.send(msg, rinfo.port, rinfo.address));
  await new Promise<void>((r) => echo.bind(0, '127.0.0.1', r));
  redis = createServer((s) => {
    sockets.add(s.on('close', () => sockets.delete(s)));
    s.on('data', (d) => s.write(String(d) === 'PING\r\n' ? '+PONG\r\n' : '-ERR\r\n'));
  });
  await new Promise<void>((r) => redis.listen(0, '127.0.0.1', r));
  daemon = await startDaemon();
});
afterAll(async () => {
  await daemon?.stop();
  await dnsmasq?.stop();
  echo?.close();
  for (const s of sockets) s.destroy();
  await new Promise((r) => redis?.close(r));
});

const redisTarget = () => `127.0.0.1:${(redis.address() as { port: number }).port}`;
const resolver = () => `127.0.0.1:${dnsmasq.port}`;

/** [name, type, target, the type's options, expected status, expected errorCode, a condition]. */
function cases(): Array<[string, ResourceType, string, Record<string, unknown>, string, string | null, string[]]> {
  return [
    [
      'dns-mx',
      'DNS',
      'x.test',
      { recordType: 'MX', resolver: resolver(), transport: 'tcp' },
      'AVAILABLE',
      null,
      ['[BODY] == 10 mail.x.test.'],
    ],
    ['dns-nx', 'DNS', 'nope.x.test', { resolver: resolver() }, 'NOT_AVAILABLE', 'DNS_ERROR', []],
    ['dns-nx-up', 'DNS', 'nope.x.test', { resolver: resolver() }, 'AVAILABLE', null, ['[DNS_RCODE] == NXDOMAIN']],
    ['udp-echo', 'UDP', `127.0.0.1:${echo.address().port}`, { send: 'hello' }, 'AVAILABLE', null, ['[BODY] == hello']],
    ['tcp-pong', 'TCP', redisTarget(), { send: 'PING\r\n', expect: '+PONG' }, 'AVAILABLE', null, []],
    ['tcp-wrong', 'TCP', redisTarget(), { send: 'PONG\r\n', expect: '+PONG' }, 'NOT_AVAILABLE', 'EXPECT_FAILED', []],
  ];
}

async function call(method: string, path: string, body?: unknown): Promise<any> {
  const res = await daemon.admin.raw(method, path, body === undefined ? undefined : JSON.stringify(body));
  if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
  return JSON.parse(res.text);
}

describe('DNS, UDP and TCP send/expect through a daemon', () => {
  it('each resource: its options stored, its scheduled check and an on-demand check give the expected verdict', async () => {
    for (const [name, type, target, options, status, errorCode, conditions] of cases()) {
      const field = type.toLowerCase();
      const created = await call('POST', '/api/resources', {
        name,
        resourceType: type,
        target,
        intervalSeconds: 3600,
        [field]: options,
        conditions,
      });
      const detail = await call('GET', `/admin/api/resources/${created.id}`);
      expect(detail[field], name).toMatchObject(options);
      let history: any[] = [];
      for (let i = 0; i < 200 && history.length === 0; i++) {
        history = await call('GET', `/api/resources/${created.id}/history`);
        if (history.length === 0) await new Promise((r) => setTimeout(r, 50));
      }
      expect(history[0], `${name} scheduled`).toMatchObject({ status, errorCode });
      expect(await call('POST', `/api/resources/${created.id}/check`, {}), `${name} on demand`).toMatchObject({ status, errorCode });
    }
  });

  it('resources/test reports [DNS_RCODE] and [BODY] of a DNS check', async () => {
    const tested = await call('POST', '/admin/api/resources/test', {
      resourceType: 'DNS',
      target: 'x.test',
      dns: { recordType: 'TXT', resolver: resolver() },
      conditions: ['[DNS_RCODE] == NOERROR', '[BODY] == "v=spf1 -all"'],
    });
    expect(tested).toMatchObject({ status: 'AVAILABLE', errorCode: null });
    expect(tested.report.conditions.map((c: { message: string }) => c.message)).toEqual([
      '[DNS_RCODE] (NOERROR) == NOERROR',
      '[BODY] ("v=spf1 -all") == "v=spf1 -all"',
    ]);
  });
});

describe('DNS, UDP and TCP send/expect at an agent location', () => {
  let tc: TestContext;
  beforeAll(async () => {
    tc = await openContext();
  });
  afterAll(async () => {
    await closeAll();
    await tc?.close();
  });

  it('each check gives the same verdict at the agent as at the daemon', async () => {
    const log = pino({ level: 'silent' });
    const pair = await muxPair();
    const server = new ProbeServer({ concurrency: 4, protocol: PROBE_PROTOCOL, log });
    agentSide(pair, server, log);
    const probes = daemonSide(tc.ctx, pair, server.support());
    const ctx: RoundDeps = { ...tc.ctx, tunnel: { ...nothingConnected, probeAgent: (id, name, c) => probes.probe(id, name, c) } };
    try {
      for (const [name, type, target, options, status, errorCode, conditions] of cases()) {
        const input: ProbeInput = { resourceId: 9, type, target, skipTLS: false, recursive: false, conditions, timeoutMs: 3_000 };
        input.options = normaliseOptions(type as OptionedType, options);
        const here = await checkAt(ctx, tc.ctx.prober, input, DAEMON_LOCATION);
        const there = await checkAt(ctx, tc.ctx.prober, input, { agentId: 1, name: 'office' });
        expect(there.ran, name).toBe(true);
        expect(there.result, name).toMatchObject({ status, errorCode, message: here.result.message });
      }
    } finally {
      probes.close();
      await server.close();
    }
  });
});
