import { createSocket } from 'node:dgram';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ProbeServer } from '../../cli/agent/probes.ts';
import { normaliseOptions, type OptionedType } from '../../daemon/probes/check-options.ts';
import { DAEMON_LOCATION } from '../../daemon/probes/locations.ts';
import { checkAt, type RoundDeps } from '../../daemon/probes/rounds.ts';
import { nothingConnected } from '../../daemon/tunnel-control.ts';
import type { ProbeInput, ResourceType } from '../../src/probes/types.ts';
import { parseRemoteCheck } from '../../src/tunnel/probe-messages.ts';
import { PROBE_PROTOCOL, type RemoteCheck } from '../../src/tunnel/probe-protocol.ts';
import { openContext, type TestContext } from '../probes/helpers/context.ts';
import { closeAll, muxPair } from '../tunnel/mux-helpers.ts';
import { agentSide, daemonSide, sendRaw } from './probe-pair.ts';

/**
 * The protocol check types at an agent location, over a real loopback mux session
 * (docs/API.md#check-types): each type's options cross in the check (probe protocol 2), the agent
 * runs the shared runner with them and its verdict equals the daemon's for the same input; an
 * agent of protocol 1 leaves the location unknown, saying why; options that are not the type's,
 * or a field out of its range, are refused with a sentence naming it.
 */
const log = pino({ level: 'silent' });
let tc: TestContext;
/** A TCP port that takes connections and closes them at once; and one where nothing listens. */
let closing: Server;
const held = new Set<Socket>();
let open = 0;
let closed = 0;

beforeAll(async () => {
  tc = await openContext();
  closing = createServer((s) => {
    held.add(s);
    s.on('close', () => held.delete(s));
    s.end();
  });
  await new Promise<void>((r) => closing.listen(0, '127.0.0.1', r));
  open = (closing.address() as AddressInfo).port;
  const gone = createServer();
  await new Promise<void>((r) => gone.listen(0, '127.0.0.1', r));
  closed = (gone.address() as AddressInfo).port;
  await new Promise((r) => gone.close(r));
});
afterAll(async () => {
  // Sockets this server ended may not have closed yet (the peer half-closes lazily): the test ends them.
  for (const s of held) s.destroy();
  await new Promise((r) => closing?.close(r));
  await tc.close();
});
afterEach(closeAll);

/** A v2 (or older) agent on a fresh mux pair, and the daemon's side of it. */
async function connected(protocol = PROBE_PROTOCOL) {
  const pair = await muxPair();
  const server = new ProbeServer({ concurrency: 4, protocol, log });
  agentSide(pair, server, log);
  const probes = daemonSide(tc.ctx, pair, server.support());
  const ctx: RoundDeps = { ...tc.ctx, tunnel: { ...nothingConnected, probeAgent: (id, name, c) => probes.probe(id, name, c) } };
  return {
    pair,
    probes,
    ctx,
    close: async () => {
      probes.close();
      await server.close();
    },
  };
}

/** A check of each protocol type with options other than the defaults, against loopback ports. */
const CASES: Array<[ResourceType, string, Record<string, unknown> | null]> = [
  ['DNS', 'example.com', { recordType: 'MX', resolver: '127.0.0.1:CLOSED', transport: 'tcp' }],
  ['PING', '127.0.0.1', { count: 2, intervalMs: 20, family: 'ipv4' }],
  ['TLS', '127.0.0.1:OPEN', { starttls: 'smtp', sni: 'mail.example.com', minVersion: 'TLSv1.3' }],
  ['UDP', '127.0.0.1:OPEN', { send: '0a0b', sendEncoding: 'hex' }],
  ['TCP', '127.0.0.1:OPEN', { send: 'PING\r\n', expect: '^\\+PONG', expectKind: 'regex' }],
  ['GRPC', '127.0.0.1:OPEN', { service: 'monctl.Health', tls: true }],
  ['WEBSOCKET', 'ws://127.0.0.1:OPEN/socket', { headers: { 'X-Token': 'abc' }, send: 'hello' }],
  ['SSH', '127.0.0.1:OPEN', null],
];

function inputOf(type: ResourceType, target: string, given: Record<string, unknown> | null): ProbeInput {
  // OPEN and CLOSED stand for the ports, which exist once beforeAll ran.
  const ports = (text: string) => text.replaceAll('OPEN', String(open)).replaceAll('CLOSED', String(closed));
  const input: ProbeInput = { resourceId: 9, type, target: ports(target), skipTLS: true, recursive: false, timeoutMs: 2_000 };
  if (given) input.options = normaliseOptions(type as OptionedType, JSON.parse(ports(JSON.stringify(given))));
  return input;
}

describe('protocol check types at an agent', () => {
  it.each(CASES)('%s: the options cross whole, and the verdict at the agent equals the daemon', async (type, target, given) => {
    const { ctx, close } = await connected();
    const office = { agentId: 1, name: 'office' };
    const input = inputOf(type, target, given);
    try {
      const here = await checkAt(ctx, tc.ctx.prober, input, DAEMON_LOCATION);
      const there = await checkAt(ctx, tc.ctx.prober, input, office);
      expect(there.ran).toBe(true);
      const verdict = ({ result }: typeof here) => ({ status: result.status, message: result.message, errorCode: result.errorCode });
      expect(verdict(there)).toEqual(verdict(here));
    } finally {
      await close();
    }
  });

  it("the options reach the agent's runner: a UDP datagram from udp.send, echoed, meets [BODY] at both", async () => {
    const echo = createSocket('udp4');
    echo.on('message', (msg, from) => echo.send(msg, from.port, from.address));
    await new Promise<void>((r) => echo.bind(0, '127.0.0.1', r));
    const { ctx, close } = await connected();
    try {
      const input = inputOf('UDP', `127.0.0.1:${echo.address().port}`, { send: '70696e67', sendEncoding: 'hex' });
      input.conditions = ['[BODY] == ping'];
      const here = await checkAt(ctx, tc.ctx.prober, input, DAEMON_LOCATION);
      const there = await checkAt(ctx, tc.ctx.prober, input, { agentId: 1, name: 'office' });
      expect(here.result).toMatchObject({ status: 'AVAILABLE', errorCode: null });
      expect(there.result).toMatchObject({ status: 'AVAILABLE', errorCode: null, message: here.result.message });
    } finally {
      await close();
      await new Promise<void>((r) => echo.close(() => r()));
    }
  });

  it('parseRemoteCheck keeps each type and its options exactly as the daemon sent them', () => {
    for (const [type, target, given] of CASES) {
      const input = inputOf(type, target, given);
      const check: RemoteCheck = { type, target: input.target, skipTLS: true, recursive: false, timeoutMs: 5_000 };
      if (input.options) check.options = input.options;
      expect(parseRemoteCheck(JSON.parse(JSON.stringify(check)), 2), type).toEqual(check);
    }
  });

  it('an agent speaking protocol 1: a new type or options leave the location unknown with the reason, unsent', async () => {
    const { pair, probes, close } = await connected(1);
    let streams = 0;
    pair.acceptor.on('stream', () => streams++);
    try {
      const dns = inputOf('DNS', 'example.com', { recordType: 'TXT' });
      const outcome = await probes.probe(1, 'office', { ...base('DNS', dns.target), options: dns.options });
      expect(!outcome.ran && outcome.message).toBe(
        'agent office speaks probe protocol 1; this check needs protocol 2 (DNS checks, DNS options): upgrade the agent to run it there',
      );
      const ssh = await probes.probe(1, 'office', base('SSH', '127.0.0.1'));
      expect(!ssh.ran && ssh.message).toContain('(SSH checks)');
      const tcp = inputOf('TCP', '127.0.0.1:OPEN', { expect: 'x' });
      const sendExpect = await probes.probe(1, 'office', { ...base('TCP', tcp.target), options: tcp.options });
      expect(!sendExpect.ran && sendExpect.message).toContain('(TCP options)');
      expect(streams).toBe(0);
      // A plain TCP connect is still protocol 1's.
      expect(await probes.probe(1, 'office', base('TCP', `127.0.0.1:${open}`))).toMatchObject({ ran: true, status: 'AVAILABLE' });
    } finally {
      await close();
    }
  });

  it('options of another type, a missing or out-of-range field: refused BAD_REQUEST naming it, and the agent goes on', async () => {
    const { pair, probes, close } = await connected();
    const dns = normaliseOptions('DNS', {});
    const refusals: Array<[unknown, string]> = [
      [{ ...base('HTTP', 'http://127.0.0.1:1/'), options: dns }, 'options are not for HTTP checks'],
      [{ ...base('SSH', '127.0.0.1'), options: {} }, 'options are not for SSH checks'],
      [{ ...base('DNS', 'example.com'), options: [] }, 'options must be an object'],
      [{ ...base('DNS', 'example.com'), options: { ...dns, recordType: 'ANY' } }, 'options.recordType must be one of A, AAAA'],
      [
        { ...base('PING', '127.0.0.1'), options: { count: 11, intervalMs: 200, family: 'auto' } },
        'options.count must be a whole number from 1 to 10',
      ],
      [{ ...base('PING', '127.0.0.1'), options: { count: 3, family: 'auto' } }, 'options.intervalMs must be'],
      [
        { ...base('UDP', '127.0.0.1:1'), options: { send: 'x'.repeat(8193), sendEncoding: 'text' } },
        'options.send must be text of at most 8192',
      ],
      [
        { ...base('WEBSOCKET', 'ws://127.0.0.1:1/'), options: { headers: { 'X-A': 'a\r\nB: c' }, send: null } },
        'options.headers must have values',
      ],
      [
        { ...base('WEBSOCKET', 'ws://127.0.0.1:1/'), options: { headers: { 'bad name': 'a' }, send: null } },
        'options.headers must have HTTP token names',
      ],
      [{ ...base('GRPC', '127.0.0.1:1'), options: { service: 'a/b', tls: false } }, 'options.service must be a service name'],
      [{ ...base('FTP', '127.0.0.1:1') }, 'type must be one of HTTP, TCP, DOCKER, DNS'],
    ];
    try {
      for (const [message, expected] of refusals) {
        const refused = await sendRaw(pair, JSON.stringify(message));
        expect(refused.code, expected).toBe('BAD_REQUEST');
        expect(refused.message).toContain(expected);
      }
      expect(await probes.probe(1, 'office', base('TCP', `127.0.0.1:${open}`))).toMatchObject({ ran: true, status: 'AVAILABLE' });
    } finally {
      await close();
    }
  });
});

function base(type: string, target: string): RemoteCheck {
  return { type: type as ResourceType, target, skipTLS: false, recursive: false, timeoutMs: 2_000 };
}
