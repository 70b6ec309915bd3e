import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ProbeServer } from '../../cli/agent/probes.ts';
import { DAEMON_LOCATION } from '../../daemon/probes/locations.ts';
import { checkAt, type RoundDeps } from '../../daemon/probes/rounds.ts';
import { nothingConnected } from '../../daemon/tunnel-control.ts';
import type { HttpRequestSpec, ProbeInput } from '../../src/probes/types.ts';
import type { MuxStream } from '../../src/tunnel/mux/stream.ts';
import { parseRemoteCheck } from '../../src/tunnel/probe-messages.ts';
import { PROBE_ANSWER_LIMIT, PROBE_CHECK_LIMIT, PROBE_PROTOCOL, type RemoteCheck } from '../../src/tunnel/probe-protocol.ts';
import { openContext, type TestContext } from '../probes/helpers/context.ts';
import { closeAll, muxPair } from '../tunnel/mux-helpers.ts';
import { agentSide, daemonSide, sendRaw } from './probe-pair.ts';

/**
 * Probe protocol 2 over a real loopback mux session (docs/API.md#check-locations): a check
 * carries the resource's conditions and request, and gets the same verdict at the agent as at the
 * daemon; an agent speaking protocol 1 is sent only what protocol 1 carries; garbled or oversized
 * messages are refused on both sides without a crash; secrets never reach the agent's log.
 */
const SECRETS = ['sekrit-header-7f3a', 'sekrit-token-91bc', 'sekrit-password-4d2e', 'sekrit-key-0e55'];
let logged = '';
const log = pino(
  { level: 'trace' },
  new Writable({
    write(chunk, _enc, done) {
      logged += chunk;
      done();
    },
  }),
);
let tc: TestContext;
let target: Server;
let base = '';

beforeAll(async () => {
  tc = await openContext();
  target = createServer((req, res) => {
    if (req.url === '/slow') return void setTimeout(() => res.end('late'), 3_000).unref();
    const status = req.url === '/down' ? 'DOWN' : 'UP';
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ status, items: [1, 2, 3] }));
  });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
});
afterAll(async () => {
  target.closeAllConnections();
  await new Promise((r) => target.close(r));
  await tc.close();
});
afterEach(closeAll);

const check = (extra: Partial<RemoteCheck> = {}): RemoteCheck => ({
  type: 'HTTP',
  target: `${base}/up`,
  skipTLS: false,
  recursive: false,
  timeoutMs: 5_000,
  ...extra,
});

/** A request with every kind of secret, as the daemon opens them for one check. */
const secretRequest = (extra: Partial<HttpRequestSpec> = {}): HttpRequestSpec => ({
  method: 'POST',
  headers: [
    ['X-Plain', 'plain-value'],
    ['X-Api-Key', SECRETS[0]],
  ],
  body: '{"q":1}',
  contentType: 'application/json',
  auth: { type: 'bearer', token: SECRETS[1] },
  clientCert: null,
  followRedirects: true,
  expectStatus: [[200, 299]],
  ...extra,
});

/** A v2 agent (ProbeServer) on a fresh mux pair, and the daemon's side of it. */
async function connected(protocol = PROBE_PROTOCOL) {
  const pair = await muxPair();
  const server = new ProbeServer({ concurrency: 4, protocol, log });
  agentSide(pair, server, log);
  const probes = daemonSide(tc.ctx, pair, server.support());
  const close = async () => {
    probes.close();
    await server.close();
  };
  return { pair, server, probes, close };
}

describe('probe protocol 2', () => {
  it('a check with conditions gets the same verdict and message at the agent as at the daemon, passing and failing', async () => {
    const { probes, close } = await connected();
    const ctx: RoundDeps = { ...tc.ctx, tunnel: { ...nothingConnected, probeAgent: (id, name, c) => probes.probe(id, name, c) } };
    const office = { agentId: 1, name: 'office' };
    try {
      for (const [path, verdict] of [
        ['/up', { status: 'AVAILABLE', errorCode: null, message: '200 OK' }],
        ['/down', { status: 'NOT_AVAILABLE', errorCode: 'CONDITION_FAILED', message: '[BODY].status (DOWN) == UP' }],
      ] as const) {
        const input: ProbeInput = {
          resourceId: 7,
          type: 'HTTP',
          target: `${base}${path}`,
          skipTLS: false,
          recursive: false,
          conditions: ['[STATUS] == 200', '[BODY].status == UP', 'len([BODY].items) == 3'],
        };
        const here = await checkAt(ctx, tc.ctx.prober, input, DAEMON_LOCATION);
        const there = await checkAt(ctx, tc.ctx.prober, input, office);
        expect(here).toMatchObject({ ran: true, result: verdict });
        expect(there).toMatchObject({ location: office, ran: true, result: verdict });
      }
    } finally {
      await close();
    }
  });

  it('the agent announces protocol 2 and takes streams of 1 and 2', async () => {
    const { pair, server, close } = await connected();
    try {
      expect(server.support()).toMatchObject({ protocol: 2 });
      expect(await sendRaw(pair, JSON.stringify(check()), 1)).toMatchObject({ answer: { status: 'AVAILABLE', message: '200 OK' } });
      const v2 = await sendRaw(pair, JSON.stringify(check({ target: `${base}/down`, conditions: ['[BODY].status == UP'] })));
      expect(v2).toMatchObject({ answer: { status: 'NOT_AVAILABLE', errorCode: 'CONDITION_FAILED' } });
    } finally {
      await close();
    }
  });

  it("the agent answers a report and the timing when asked, and honours the resource's own timeout", async () => {
    const { probes, close } = await connected();
    try {
      const reported = await probes.probe(
        1,
        'office',
        check({ target: `${base}/down`, conditions: ['[BODY].status == UP'], report: true }),
      );
      expect(reported).toMatchObject({
        ran: true,
        status: 'NOT_AVAILABLE',
        report: {
          conditions: [{ condition: '[BODY].status == UP', ok: false, message: '[BODY].status (DOWN) == UP' }],
          response: { status: 200, body: '{"status":"DOWN","items":[1,2,3]}', bodyTruncated: false },
        },
      });
      expect(reported.ran && reported.timing?.totalMs).toBeGreaterThanOrEqual(0);
      // The runner's timeout is 5 s; the resource's own, 300 ms, ends the check against a 3 s first byte.
      const slow = await probes.probe(1, 'office', check({ target: `${base}/slow`, checkTimeoutMs: 300 }));
      expect(slow).toMatchObject({ ran: true, status: 'NOT_AVAILABLE', errorCode: 'CONNECTION_ERROR' });
      expect(slow.ran && slow.message).toMatch(/timeout after 300 ms/);
    } finally {
      await close();
    }
  });

  it('an agent speaking protocol 1: a check that needs 2 is unknown with the upgrade message and not sent; a plain one runs', async () => {
    const { pair, probes, close } = await connected(1);
    let streams = 0;
    pair.acceptor.on('stream', () => streams++);
    try {
      for (const [extra, needs] of [
        [{ conditions: ['[STATUS] == 200'] }, 'conditions'],
        [{ http: secretRequest() }, 'request fields'],
        [{ checkTimeoutMs: 2_000 }, 'its own timeout'],
        [{ upsideDown: true }, 'upside-down'],
        [{ report: true }, 'a report'],
      ] as const) {
        const outcome = await probes.probe(1, 'office', check(extra));
        expect(!outcome.ran && outcome.message).toBe(
          `agent office speaks probe protocol 1; this check needs protocol 2 (${needs}): upgrade the agent to run it there`,
        );
      }
      expect(streams).toBe(0);
      // The hints of protocol 2 (the resource id, the body cap) are left out, not refused.
      expect(await probes.probe(1, 'office', check({ resourceId: 3, maxBodyBytes: 1024 }))).toMatchObject({
        ran: true,
        status: 'AVAILABLE',
        message: '200 OK',
      });
      expect(streams).toBe(1);
    } finally {
      await close();
    }
  });

  it('garbled or oversized checks are refused BAD_REQUEST, saying what is wrong, and the agent goes on', async () => {
    const { pair, probes, close } = await connected();
    const refusals: Array<[string | Buffer, string, number?]> = [
      ['not json', 'the message is not JSON'],
      ['[1,2]', 'the check is not an object'],
      [JSON.stringify(check({ conditions: ['[STATUS] == 200'] })), 'conditions need probe protocol 2', 1],
      [JSON.stringify(check({ conditions: Array(33).fill('[STATUS] == 200') })), 'conditions must be at most 32 strings'],
      [JSON.stringify({ ...check(), http: { ...secretRequest(), method: 'TRACE' } }), 'http.method must be one of'],
      [JSON.stringify(check({ http: secretRequest({ headers: [['X-Bad', 'a\r\nInjected: 1']] }) })), 'http.headers must be'],
      [JSON.stringify(check({ http: secretRequest({ headers: [['Bad Name', 'v']] }) })), 'http.headers must be'],
      [JSON.stringify(check({ http: secretRequest({ expectStatus: [[299, 200]] }) })), 'http.expectStatus must be'],
      [JSON.stringify({ ...check(), http: { ...secretRequest(), auth: { type: 'basic', username: 'a:b', password: 'x' } } }), 'http.auth'],
      [JSON.stringify({ ...check({ type: 'TCP', target: '127.0.0.1:1' }), http: secretRequest() }), 'http is for HTTP checks only'],
      [JSON.stringify({ ...check(), upsideDown: 'yes' }), 'upsideDown must be a boolean'],
      [JSON.stringify({ ...check(), checkTimeoutMs: 0 }), 'checkTimeoutMs must be 1 to'],
      [Buffer.alloc(PROBE_CHECK_LIMIT + 1, 0x20), `message over ${PROBE_CHECK_LIMIT} bytes`],
    ];
    try {
      for (const [text, message, version] of refusals) {
        const refused = await sendRaw(pair, text, version);
        expect(refused.code, message).toBe('BAD_REQUEST');
        expect(refused.message).toContain(message);
      }
      expect(await probes.probe(1, 'office', check())).toMatchObject({ ran: true, status: 'AVAILABLE' });
    } finally {
      await close();
    }
  });

  it('a check at every cap of the API fits the limit and is taken; a larger one is not sent', async () => {
    const { probes, close } = await connected();
    const full = check({
      resourceId: 1,
      conditions: Array(32).fill(`[BODY].status == ${'U'.repeat(1000)}`),
      http: secretRequest({
        headers: Array.from({ length: 64 }, (_, i) => [`X-Header-${i}`, 'v'.repeat(8192)] as [string, string]),
        body: 'é'.repeat(64 * 1024),
        clientCert: { cert: 'c'.repeat(65_536), key: 'k'.repeat(65_536) },
        expectStatus: Array.from({ length: 32 }, (_, i) => [200 + i, 200 + i] as [number, number]),
      }),
      checkTimeoutMs: 120_000,
      upsideDown: true,
      maxBodyBytes: 1 << 20,
      report: true,
    });
    const size = Buffer.byteLength(JSON.stringify(full));
    expect(size).toBeLessThan(PROBE_CHECK_LIMIT);
    try {
      // Taken whole by the agent: a refusal would be ran: false, with the agent's reason.
      expect(await probes.probe(1, 'office', full)).toMatchObject({ ran: true });
      const over = check({ http: secretRequest({ body: 'x'.repeat(PROBE_CHECK_LIMIT) }) });
      const outcome = await probes.probe(1, 'office', over);
      expect(!outcome.ran && outcome.message).toMatch(/^the check is too large to send to agent office \(\d+ bytes; at most 1048576\)$/);
      expect(probes.load(1).inFlight).toBe(0);
    } finally {
      await close();
    }
  });

  it("the agent's answer carries timing and report; a garbled or oversized answer is unknown, not a crash", async () => {
    const pair = await muxPair();
    const answers: string[] = [];
    pair.acceptor.on('stream', (stream: MuxStream) => {
      stream.resume();
      stream.once('end', () => stream.end(answers.shift()));
    });
    const probes = daemonSide(tc.ctx, pair, { protocol: 2, concurrency: 4, queue: 16 });
    const answer = {
      status: 'NOT_AVAILABLE',
      message: '[BODY].status (DOWN) == UP',
      errorCode: 'CONDITION_FAILED',
      durationMs: 12,
      waitedMs: 0,
      timing: { dnsMs: null, connectMs: 1.5, tlsMs: null, firstByteMs: 9, totalMs: 12 },
      report: {
        conditions: [{ condition: '[BODY].status == UP', ok: false, message: '[BODY].status (DOWN) == UP' }],
        response: {
          status: 200,
          statusText: 'OK',
          headers: { 'content-type': 'application/json', 'set-cookie': ['a=1', 'b=2'] },
          body: '{"status":"DOWN"}',
          bodyTruncated: false,
        },
      },
    };
    try {
      answers.push(JSON.stringify(answer));
      expect(await probes.probe(1, 'office', check({ report: true }))).toEqual({ ran: true, ...answer });
      for (const bad of [
        'not json',
        JSON.stringify({ ...answer, status: 'MAYBE' }),
        JSON.stringify({ ...answer, timing: { totalMs: -1 } }),
        JSON.stringify({ ...answer, report: { conditions: 'all good', response: null } }),
        JSON.stringify({ ...answer, report: { ...answer.report, response: { ...answer.report.response, body: 'x'.repeat(5000) } } }),
      ]) {
        answers.push(bad);
        const outcome = await probes.probe(1, 'office', check());
        expect(outcome.ran, bad.slice(0, 80)).toBe(false);
      }
      answers.push(JSON.stringify({ ...answer, message: 'x'.repeat(PROBE_ANSWER_LIMIT) }));
      const oversized = await probes.probe(1, 'office', check());
      expect(!oversized.ran && oversized.message).toMatch(`message over ${PROBE_ANSWER_LIMIT} bytes`);
      expect(probes.load(1).inFlight).toBe(0);
    } finally {
      probes.close();
    }
  });

  it("secrets cross to the agent for the check only: never in the agent's log at trace level, nor in a refusal", async () => {
    const { pair, probes, close } = await connected();
    logged = '';
    try {
      const withSecrets = check({
        http: secretRequest({
          auth: { type: 'basic', username: 'user', password: SECRETS[2] },
          clientCert: { cert: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n', key: SECRETS[3] },
        }),
        conditions: ['[STATUS] == 200'],
        report: true,
      });
      const outcome = await probes.probe(1, 'office', withSecrets);
      expect(outcome.ran).toBe(true);
      const bearer = check({ http: secretRequest(), report: true });
      expect(await probes.probe(1, 'office', bearer)).toMatchObject({ ran: true });
      // A refused check says what is wrong without quoting what it carried.
      const refused = await sendRaw(pair, JSON.stringify({ ...bearer, http: { ...bearer.http, method: 'BREW' } }));
      expect(refused.code).toBe('BAD_REQUEST');
      expect(logged).toContain('remote check'); // the log was at trace level and saw the checks
      for (const secret of SECRETS) {
        expect(logged).not.toContain(secret);
        expect(refused.message).not.toContain(secret);
      }
    } finally {
      await close();
    }
  });

  it('parseRemoteCheck keeps a plain check of protocol 1 as it was', () => {
    const plain = check();
    expect(parseRemoteCheck(JSON.parse(JSON.stringify(plain)), 1)).toEqual(plain);
    expect(parseRemoteCheck(JSON.parse(JSON.stringify(plain)), 2)).toEqual(plain);
  });
});
