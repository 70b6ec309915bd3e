import { createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import { createServer, type Server } from 'node:http';
import * as grpc from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { ProbeServer } from '../../cli/agent/probes.ts';
import { normaliseOptions, type OptionedType } from '../../daemon/probes/check-options.ts';
import { DAEMON_LOCATION } from '../../daemon/probes/locations.ts';
import { checkAt, type RoundDeps } from '../../daemon/probes/rounds.ts';
import { nothingConnected } from '../../daemon/tunnel-control.ts';
import type { ProbeInput, ResourceType } from '../../src/probes/types.ts';
import { PROBE_PROTOCOL } from '../../src/tunnel/probe-protocol.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { bearer, okJson } from '../helpers/http.ts';
import { agentSide, daemonSide } from '../locations/probe-pair.ts';
import { closeAll, muxPair } from '../tunnel/mux-helpers.ts';
import { openContext, type TestContext } from './helpers/context.ts';

/**
 * GRPC, WEBSOCKET and SSH resources end to end (docs/API.md#check-types): created through a real
 * daemon's API with their options, checked by it against real servers on loopback; and the same
 * checks at an agent location, over a real mux session, with the daemon's verdict.
 */
const health = new HealthImplementation({ '': 'SERVING', 'shop.Cart': 'NOT_SERVING' });
let grpcServer: grpc.Server;
let grpcTarget: string;
let http: Server;
let wsUrl: string;
let banner: TcpServer;
let sshTarget: string;
let daemon: TestDaemon;
let tc: TestContext;

beforeAll(async () => {
  grpcServer = new grpc.Server();
  health.addToServer(grpcServer);
  const grpcPort = await new Promise<number>((resolve, reject) =>
    grpcServer.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  grpcTarget = `127.0.0.1:${grpcPort}`;
  const wss = new WebSocketServer({ noServer: true });
  http = createServer().on('upgrade', (req, socket, head) =>
    wss.handleUpgrade(req, socket, head, (ws) => ws.on('message', (data) => ws.send(`echo ${data}`))),
  );
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  wsUrl = `ws://127.0.0.1:${(http.address() as { port: number }).port}/live`;
  // An SSH server's greeting; the probe's own tests run a real sshd.
  banner = createTcpServer((s) => s.on('error', () => undefined).end('SSH-2.0-OpenSSH_9.9 monctl-test\r\n'));
  await new Promise<void>((r) => banner.listen(0, '127.0.0.1', r));
  sshTarget = `127.0.0.1:${(banner.address() as { port: number }).port}`;
  [daemon, tc] = await Promise.all([startDaemon(), openContext()]);
});

afterAll(async () => {
  await Promise.all([daemon?.stop(), tc?.close()]);
  grpcServer?.forceShutdown();
  http?.closeAllConnections();
  http?.close();
  banner?.close();
  await closeAll();
});

const api = (method: string, path: string, body?: unknown) => okJson(daemon.url, method, path, body, bearer(daemon.adminKey));

describe('through a real daemon', () => {
  it('GRPC, WEBSOCKET and SSH resources are checked with their options; NOT_SERVING is GRPC_ERROR', async () => {
    const made = async (body: Record<string, unknown>) => (await api('POST', '/api/resources', { active: false, ...body })).id as number;
    const serving = await made({ name: 'grpc up', resourceType: 'GRPC', target: grpcTarget });
    const cart = await made({ name: 'grpc cart', resourceType: 'GRPC', target: grpcTarget, grpc: { service: 'shop.Cart' } });
    const socket = await made({
      name: 'ws echo',
      resourceType: 'WEBSOCKET',
      target: wsUrl,
      websocket: { send: 'hi' },
      conditions: ['[BODY] == echo hi'],
    });
    const ssh = await made({ name: 'ssh', resourceType: 'SSH', target: sshTarget, conditions: ['[BODY] == pat(SSH-2.0-*)'] });
    expect(await api('POST', `/api/resources/${serving}/check`)).toMatchObject({ status: 'AVAILABLE', errorCode: null });
    expect(await api('POST', `/api/resources/${cart}/check`)).toMatchObject({
      status: 'NOT_AVAILABLE',
      errorCode: 'GRPC_ERROR',
      message: 'NOT_SERVING',
    });
    expect(await api('POST', `/api/resources/${socket}/check`)).toMatchObject({ status: 'AVAILABLE', errorCode: null });
    expect(await api('POST', `/api/resources/${ssh}/check`)).toMatchObject({
      status: 'AVAILABLE',
      message: 'SSH-2.0-OpenSSH_9.9 monctl-test',
    });
    expect((await api('GET', `/admin/api/resources/${cart}`)).grpc).toEqual({ service: 'shop.Cart', tls: false });
  });

  it('resources test reports the values seen: the health status as [BODY], which then decides', async () => {
    const answer = await api('POST', '/admin/api/resources/test', {
      resourceType: 'GRPC',
      target: grpcTarget,
      grpc: { service: 'shop.Cart' },
      conditions: ['[BODY] == SERVING'],
    });
    expect(answer).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONDITION_FAILED' });
    expect(answer.report.conditions).toEqual([{ condition: '[BODY] == SERVING', ok: false, message: '[BODY] (NOT_SERVING) == SERVING' }]);
  });
});

describe('at an agent location', () => {
  const log = pino({ level: 'silent' });
  const cases: Array<[ResourceType, () => string, Record<string, unknown> | null, string[]]> = [
    ['GRPC', () => grpcTarget, { service: '' }, []],
    ['GRPC', () => grpcTarget, { service: 'shop.Cart' }, []],
    ['GRPC', () => grpcTarget, { service: 'no.Such' }, []],
    ['WEBSOCKET', () => wsUrl, { send: 'x' }, ['[BODY] == echo x']],
    ['SSH', () => sshTarget, null, []],
  ];

  it.each(cases)('%s %#: the agent’s verdict is the daemon’s', async (type, target, given, conditions) => {
    const pair = await muxPair();
    const server = new ProbeServer({ concurrency: 4, protocol: PROBE_PROTOCOL, log });
    agentSide(pair, server, log);
    const probes = daemonSide(tc.ctx, pair, server.support());
    const ctx: RoundDeps = { ...tc.ctx, tunnel: { ...nothingConnected, probeAgent: (id, name, c) => probes.probe(id, name, c) } };
    const input: ProbeInput = { resourceId: 9, type, target: target(), skipTLS: false, recursive: false, timeoutMs: 5_000, conditions };
    if (given) input.options = normaliseOptions(type as OptionedType, given);
    try {
      const here = await checkAt(ctx, tc.ctx.prober, input, DAEMON_LOCATION);
      const there = await checkAt(ctx, tc.ctx.prober, input, { agentId: 1, name: 'office' });
      expect(there.ran).toBe(true);
      const verdict = ({ result }: typeof here) => ({ status: result.status, message: result.message, errorCode: result.errorCode });
      expect(verdict(there)).toEqual(verdict(here));
      expect(here.result.status).toBe(given?.service === '' || type !== 'GRPC' ? 'AVAILABLE' : 'NOT_AVAILABLE');
    } finally {
      probes.close();
      await server.close();
    }
  });
});
