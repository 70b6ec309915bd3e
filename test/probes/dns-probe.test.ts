import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { type AddressInfo, createServer, type Server } from 'node:net';
import dnsPacket from 'dns-packet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProbeRunner } from '../../src/probes/runner.ts';
import type { DnsOptions, ProbeInput } from '../../src/probes/types.ts';
import { type Dnsmasq, RECORDS, startDnsmasq } from './helpers/dnsmasq.ts';

const runner = createProbeRunner({ timeoutMs: 3_000, credential: async () => undefined });
let dnsmasq: Dnsmasq;

beforeAll(async () => {
  dnsmasq = await startDnsmasq();
});
afterAll(async () => {
  await runner.close();
  await dnsmasq?.stop();
});

/** A DNS check of `target` asking dnsmasq unless the options say otherwise. */
function input(target: string, options: Partial<DnsOptions>): ProbeInput {
  const dns: DnsOptions = { recordType: 'A', resolver: `127.0.0.1:${dnsmasq.port}`, transport: 'udp', ...options };
  return { resourceId: 1, type: 'DNS', target, skipTLS: false, recursive: false, options: dns };
}
const check = (target: string, options: Partial<DnsOptions>, extra: Partial<ProbeInput> = {}) =>
  runner.probe({ ...input(target, options), ...extra });

describe('DNS checks against dnsmasq', () => {
  for (const transport of ['udp', 'tcp'] as const) {
    for (const [recordType, [name, body]] of Object.entries(RECORDS)) {
      it(`${recordType} over ${transport}: AVAILABLE, [BODY] as dig +short prints it`, async () => {
        const options = { recordType: recordType as DnsOptions['recordType'], transport };
        expect(await check(name, options)).toMatchObject({ status: 'AVAILABLE', errorCode: null });
        const conditions = ['[BODY] == x', '[DNS_RCODE] == NOERROR', '[IP] == 127.0.0.1', '[CONNECTED] == true'];
        const result = await runner.probe({ ...input(name, options), conditions }, { report: true });
        expect(result.report?.conditions.map((c) => c.message)).toEqual([
          `[BODY] (${body}) == x`,
          '[DNS_RCODE] (NOERROR) == NOERROR',
          '[IP] (127.0.0.1) == 127.0.0.1',
          '[CONNECTED] (true) == true',
        ]);
      });
    }
  }

  it('PTR of an IPv6 address asks for its ip6.arpa name', async () => {
    const result = await runner.probe({ ...input('2001:db8::1', { recordType: 'PTR' }), conditions: ['[BODY] == www.x.test.'] });
    expect(result).toMatchObject({ status: 'AVAILABLE', errorCode: null });
  });

  it('NXDOMAIN is DNS_ERROR naming the rcode and the name; [DNS_RCODE] == NXDOMAIN makes it AVAILABLE', async () => {
    expect(await check('nope.x.test', {})).toMatchObject({
      status: 'NOT_AVAILABLE',
      errorCode: 'DNS_ERROR',
      message: 'NXDOMAIN for nope.x.test',
    });
    expect(await check('nope.x.test', {}, { conditions: ['[DNS_RCODE] == NXDOMAIN'] })).toMatchObject({
      status: 'AVAILABLE',
      errorCode: null,
    });
  });

  it('a name with a label past 63 bytes is refused before anything is sent', async () => {
    const long = `${'a'.repeat(64)}.x.test`;
    expect(await check(long, {})).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'DNS_ERROR', message: `invalid DNS name "${long}"` });
  });

  it('no record of the type is DNS_ERROR "no MX record for …"', async () => {
    expect(await check('www.x.test', { recordType: 'MX' })).toMatchObject({
      status: 'NOT_AVAILABLE',
      errorCode: 'DNS_ERROR',
      message: 'no MX record for www.x.test',
    });
  });

  it('a record that changes: the next check sees the new address', async () => {
    expect(await check('moving.x.test', {}, { conditions: ['[BODY] == 192.0.2.10'] })).toMatchObject({ status: 'AVAILABLE' });
    await dnsmasq.setMoving('192.0.2.11');
    const after = await check('moving.x.test', {}, { conditions: ['[BODY] == 192.0.2.10'] });
    expect(after).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONDITION_FAILED' });
    expect(after.message).toContain('(192.0.2.11)');
    await dnsmasq.setMoving('192.0.2.10');
  });
});

describe('DNS checks that get no answer', () => {
  let silent: Socket;
  let closing: Server;
  beforeAll(async () => {
    silent = createSocket('udp4');
    await new Promise<void>((r) => silent.bind(0, '127.0.0.1', r));
    closing = createServer((s) => s.destroy());
    await new Promise<void>((r) => closing.listen(0, '127.0.0.1', r));
  });
  afterAll(async () => {
    silent.close();
    await new Promise((r) => closing.close(r));
  });

  it('a resolver that never answers is CONNECTION_ERROR within the check timeout', async () => {
    const result = await check('www.x.test', { resolver: `127.0.0.1:${silent.address().port}` }, { timeoutMs: 300 });
    expect(result).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONNECTION_ERROR' });
    expect(result.message).toContain('no answer');
  });

  it('a closed UDP port (ICMP port unreachable) is CONNECTION_ERROR ECONNREFUSED, without waiting for the timeout', async () => {
    const probe = createSocket('udp4');
    await new Promise<void>((r) => probe.bind(0, '127.0.0.1', r));
    const closedPort = probe.address().port;
    probe.close();
    const result = await check('www.x.test', { resolver: `127.0.0.1:${closedPort}` }, { timeoutMs: 60_000 });
    expect(result).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONNECTION_ERROR' });
    expect(result.message).toContain('ECONNREFUSED');
  });

  it('over TCP, a resolver that closes without answering is CONNECTION_ERROR', async () => {
    const result = await check('www.x.test', { resolver: `127.0.0.1:${(closing.address() as { port: number }).port}`, transport: 'tcp' });
    expect(result).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONNECTION_ERROR' });
  });
});

describe('DNS answers that do not fit the question', () => {
  let server: Socket;
  let tcp: Server;
  /** What the fake resolver does with each question. */
  let mode: 'wrong-id' | 'truncated' = 'wrong-id';
  beforeAll(async () => {
    const answer = (msg: Buffer, rinfo: RemoteInfo) => {
      const q = dnsPacket.decode(msg);
      const answers = [{ type: 'A' as const, name: q.questions![0].name, data: '192.0.2.99' }];
      const reply =
        mode === 'wrong-id'
          ? { type: 'response' as const, id: (q.id! + 1) % 65_536, questions: q.questions, answers }
          : { type: 'response' as const, id: q.id, flags: dnsPacket.TRUNCATED_RESPONSE, questions: q.questions, answers: [] };
      server.send(dnsPacket.encode(reply), rinfo.port, rinfo.address);
    };
    // The same port over TCP: the whole answer, as a truncated UDP one asks for.
    tcp = createServer((socket) => {
      socket.once('data', (data) => {
        const q = dnsPacket.streamDecode(data);
        socket.end(
          dnsPacket.streamEncode({
            type: 'response',
            id: q.id,
            questions: q.questions,
            answers: [{ type: 'A', name: q.questions![0].name, data: '192.0.2.77' }],
          }),
        );
      });
    });
    // A port free for both: the OS picks a TCP one, and another process may hold that number over
    // UDP (or the other way round, as a UDP pick once met a TCP listener: EADDRINUSE), so try again.
    for (let attempt = 1; ; attempt++) {
      await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r));
      const port = (tcp.address() as AddressInfo).port;
      server = createSocket('udp4').on('message', answer);
      const bound = await new Promise<boolean>((resolve) => {
        server.once('error', () => resolve(false));
        server.bind(port, '127.0.0.1', () => resolve(true));
      });
      if (bound) break;
      server.close();
      await new Promise((r) => tcp.close(r));
      if (attempt === 20) throw new Error('no port free for both UDP and TCP after 20 tries');
    }
  });
  afterAll(async () => {
    server.close();
    await new Promise((r) => tcp.close(r));
  });

  it('an answer with another id is not taken: no answer', async () => {
    mode = 'wrong-id';
    const result = await check('www.x.test', { resolver: `127.0.0.1:${server.address().port}` }, { timeoutMs: 300 });
    expect(result).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONNECTION_ERROR' });
  });

  it('a truncated UDP answer is asked again over TCP', async () => {
    mode = 'truncated';
    const result = await check('www.x.test', { resolver: `127.0.0.1:${server.address().port}` }, { conditions: ['[BODY] == 192.0.2.77'] });
    expect(result).toMatchObject({ status: 'AVAILABLE' });
  });
});
