import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ProbeServer } from '../../cli/agent/probes.ts';
import { createStreamHandler } from '../../cli/agent/serve.ts';
import type { MuxStream } from '../../src/tunnel/mux/stream.ts';
import { type ProbeSupport, probeStreamTarget, type RemoteCheck } from '../../src/tunnel/probe-protocol.ts';
import { agentSide as pairAgentSide, daemonSide as pairDaemonSide } from './probe-pair.ts';
import { openContext, type TestContext } from '../probes/helpers/context.ts';
import { closeAll, type MuxPair, muxPair, until } from '../tunnel/mux-helpers.ts';

/**
 * The probe stream of the tunnel protocol between the daemon's AgentProbes and
 * the agent's ProbeServer, over a real loopback mux session (issue 19): the
 * agent runs the check with the shared probe code; an agent from before remote
 * checks, one that announced none, one whose queue is full and one that never
 * answers each leave the location `unknown` with the reason.
 */
const log = pino({ level: 'silent' });
let tc: TestContext;
let target: Server;
let url = '';
/** Requests the target holds until released, and how many it held at once. */
const held: Array<() => void> = [];
let holding = false;
let concurrent = 0;
let maxConcurrent = 0;

beforeAll(async () => {
  tc = await openContext();
  target = createServer((_req, res) => {
    concurrent++;
    maxConcurrent = Math.max(maxConcurrent, concurrent);
    const answer = () => {
      concurrent--;
      res.end('ok');
    };
    if (holding) held.push(answer);
    else answer();
  });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(target.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  target.closeAllConnections();
  await new Promise((r) => target.close(r));
  await tc.close();
});
afterEach(closeAll);

const check = (extra: Partial<RemoteCheck> = {}): RemoteCheck => ({
  type: 'HTTP',
  target: url,
  skipTLS: false,
  recursive: false,
  timeoutMs: 5_000,
  ...extra,
});

const daemonSide = (pair: MuxPair, support: ProbeSupport | undefined) => pairDaemonSide(tc.ctx, pair, support);
const agentSide = (pair: MuxPair, server: ProbeServer) => pairAgentSide(pair, server, log);

describe('remote checks over a tunnel session', () => {
  it('the agent runs the check with the shared probe code and answers on the stream', async () => {
    const pair = await muxPair();
    const server = new ProbeServer({ concurrency: 4, protocol: 1, log });
    agentSide(pair, server);
    const probes = daemonSide(pair, server.support());
    // The load goes out on the topology stream once it moved (within 5 s).
    const published = new Promise((resolve) => {
      const stop = tc.ctx.events.channel('topology').listen((e) => {
        if (e.kind !== 'PROBE_LOAD') return;
        stop();
        resolve(e.data);
      });
    });
    try {
      const outcome = await probes.probe(1, 'office', check());
      expect(outcome).toMatchObject({ ran: true, status: 'AVAILABLE', message: '200 OK', errorCode: null });
      expect(probes.load(1)).toEqual({ agentId: 1, checksPerMinute: 1, inFlight: 0, skipped: 0 });
      expect(await published).toEqual({ agentId: 1, checksPerMinute: 1, inFlight: 0, skipped: 0 });
    } finally {
      probes.close();
      await server.close();
    }
  });

  it('an agent from before remote checks refuses the stream as a bad target: unknown, "does not support remote checks"', async () => {
    const pair = await muxPair();
    pair.acceptor.on('stream', createStreamHandler({ skipTls: false, targetTimeoutMs: 1_000, log }));
    // It even claims support (a garbled header): the stream's own version check still catches it.
    const probes = daemonSide(pair, { protocol: 1, concurrency: 4, queue: 16 });
    const outcome = await probes.probe(1, 'office', check());
    probes.close();
    expect(outcome.ran).toBe(false);
    expect(!outcome.ran && outcome.message).toMatch(
      /^agent office does not support remote checks \(probe protocol 1; it answered: invalid stream target\): upgrade it/,
    );
  });

  it('an agent that announced no probe protocol is sent nothing', async () => {
    const pair = await muxPair();
    let streams = 0;
    pair.acceptor.on('stream', () => streams++);
    const probes = daemonSide(pair, undefined);
    const outcome = await probes.probe(1, 'office', check());
    probes.close();
    expect(!outcome.ran && outcome.message).toBe(
      'agent office (monctl 0.0.9) does not support remote checks: upgrade it to run checks there',
    );
    expect(streams).toBe(0);
    expect(await probes.probe(2, 'lab', check())).toEqual({ ran: false, message: 'agent lab is not connected' });
  });

  it('a probe version the agent does not speak is reset UNSUPPORTED', async () => {
    const pair = await muxPair();
    const server = new ProbeServer({ concurrency: 4, protocol: 1, log });
    agentSide(pair, server);
    const stream = pair.opener.open(probeStreamTarget(2));
    stream.end('{}');
    const err = await new Promise<Error & { code?: string }>((resolve) => stream.once('error', resolve));
    expect(err.code).toBe('UNSUPPORTED');
    expect(err.message).toBe('probe protocol 2 is not supported by this agent (it speaks 1 to 1)');
  });

  it('at most --probe-concurrency run at the agent; past its queue the daemon skips and counts', async () => {
    const pair = await muxPair();
    const server = new ProbeServer({ concurrency: 1, protocol: 1, log });
    agentSide(pair, server);
    const support = server.support()!;
    expect(support).toEqual({ protocol: 1, concurrency: 1, queue: 4 });
    const probes = daemonSide(pair, support);
    holding = true;
    maxConcurrent = 0;
    try {
      const pending = Array.from({ length: 7 }, () => probes.probe(1, 'office', check()));
      const skipped = await Promise.all(pending.slice(5));
      for (const s of skipped) expect(!s.ran && s.message).toBe('skipped: the probe queue of agent office is full (5 checks outstanding)');
      expect(probes.load(1)).toMatchObject({ inFlight: 5, skipped: 2 });
      // The agent runs one at a time: release each held request as it arrives.
      const releaser = setInterval(() => held.shift()?.(), 20);
      const done = await Promise.all(pending.slice(0, 5));
      clearInterval(releaser);
      expect(done.map((d) => d.ran && d.status)).toEqual(Array(5).fill('AVAILABLE'));
      expect(maxConcurrent).toBe(1);
      const metrics = await tc.ctx.metrics.registry.metrics();
      expect(metrics).toMatch(/^monctl_agent_checks_skipped_total\{agent="office"\} 2$/m);
    } finally {
      holding = false;
      while (held.length) held.shift()!();
      probes.close();
      await server.close();
    }
  });

  it('no answer within the probe timeout + 5 s: unknown, timeout at agent; the agent sees the stream reset', async () => {
    const pair = await muxPair();
    let reset: Promise<unknown> | undefined;
    pair.acceptor.on('stream', (stream: MuxStream) => {
      stream.resume(); // reads the check, never answers
      reset = new Promise((resolve) => stream.once('close', resolve));
    });
    const probes = daemonSide(pair, { protocol: 1, concurrency: 4, queue: 16 });
    const outcome = await probes.probe(1, 'office', check({ timeoutMs: 200 }));
    probes.close();
    expect(!outcome.ran && outcome.message).toBe('timeout at agent office: no answer within 5.2 s');
    await reset;
  }, 15_000);

  it("a check left waiting in the agent's queue past its timeout + 5 s: unknown, timeout at agent; the agent drops it unrun", async () => {
    const pair = await muxPair();
    const server = new ProbeServer({ concurrency: 1, protocol: 1, log });
    agentSide(pair, server);
    const probes = daemonSide(pair, server.support());
    holding = true;
    let requests = 0;
    const count = () => requests++;
    target.on('request', count);
    try {
      // The one slot is taken for 8 s by a check the target never answers (its own timeout ends it).
      const slow = probes.probe(1, 'office', check({ timeoutMs: 8_000 }));
      await until(() => server.stats().running === 1);
      const queued = await probes.probe(1, 'office', check({ timeoutMs: 200 }));
      expect(!queued.ran && queued.message).toBe('timeout at agent office: no answer within 5.2 s');
      expect(server.stats()).toEqual({ running: 1, waiting: 1 });
      const first = await slow;
      expect(first).toMatchObject({ ran: true, status: 'NOT_AVAILABLE' });
      expect(server.stats()).toEqual({ running: 0, waiting: 0 });
      expect(requests).toBe(1); // the timed-out check never ran
    } finally {
      target.off('request', count);
      holding = false;
      while (held.length) held.shift()!();
      probes.close();
      await server.close();
    }
  }, 20_000);

  it('the tunnel dropping mid-check: unknown, disconnected during the check', async () => {
    const pair = await muxPair();
    pair.acceptor.on('stream', (stream: MuxStream) => {
      stream.resume();
      setTimeout(() => pair.acceptor.destroy(), 50);
    });
    const probes = daemonSide(pair, { protocol: 1, concurrency: 4, queue: 16 });
    const outcome = await probes.probe(1, 'office', check());
    probes.close();
    expect(!outcome.ran && outcome.message).toMatch(/^agent office disconnected during the check/);
  });
});
