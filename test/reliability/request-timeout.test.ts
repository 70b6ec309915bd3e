import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect as tcpConnect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { makePki, type TestPki } from '../helpers/tls.ts';
import { startAgent, startTarget, type TestAgent, until } from '../tunnel/helpers.ts';

/**
 * Issue 14, finding 12: the whole-request limit (30 s documented) measured
 * about 43 s for a body sent a byte a second. Node checks `requestTimeout`
 * only from a periodic sweep (`connectionsCheckingInterval`, 30 s by
 * default), so a request could live up to twice the limit. With the limit set
 * to 3 s here, a client that trickles a body for 20 s must be answered 408 and
 * cut off while it is still sending, on the API listener (plain and HTTPS)
 * and on the edge listener. Before the fix the sweep came after 30 s: the
 * client sent its 20 bytes undisturbed.
 */
const LIMITS = { MONCTL_REQUEST_TIMEOUT: '3s', MONCTL_HEADERS_TIMEOUT: '2s', MONCTL_SCHEDULER: 'off' };
const TRICKLE_SECONDS = 20;

interface Trickled {
  /** What the server sent back. */
  text: string;
  /** Whether the server closed the connection while the client was still sending. */
  cutOff: boolean;
  seconds: number;
}

/** Sends headers at once, then one byte of a 1,000-byte body per second, for TRICKLE_SECONDS at most. */
function trickle(open: () => Socket, host: string, path: string, headers: Record<string, string> = {}): Promise<Trickled> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = open();
    const chunks: Buffer[] = [];
    let sent = 0;
    let timer: NodeJS.Timeout | undefined;
    const finish = (cutOff: boolean) => {
      clearInterval(timer);
      socket.destroy();
      resolve({ text: Buffer.concat(chunks).toString('latin1'), cutOff, seconds: (Date.now() - started) / 1000 });
    };
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => {}); // a reset after the 408 is a close like any other
    socket.on('close', () => finish(sent < TRICKLE_SECONDS));
    const head = Object.entries({ host, 'content-type': 'application/json', 'content-length': '1000', ...headers })
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    socket.write(`POST ${path} HTTP/1.1\r\n${head}\r\n`);
    timer = setInterval(() => {
      if (sent >= TRICKLE_SECONDS) return finish(false);
      sent++;
      socket.write(sent === 1 ? '{' : ' ');
    }, 1_000);
  });
}

const address = (url: string) => {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port) };
};

function expectCutOff(result: Trickled, listener: string): void {
  console.log(
    `request-timeout: ${listener} answered ${JSON.stringify(result.text.split('\r\n')[0])} and closed after ${result.seconds.toFixed(1)} s (limit 3 s)`,
  );
  expect.soft(result.cutOff, `${listener}: still open after ${TRICKLE_SECONDS} s of a trickled body`).toBe(true);
  expect.soft(result.text).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/m);
  expect.soft(result.text).toContain('application/problem+json');
}

describe('the whole-request limit holds for a body sent a byte a second', () => {
  let d: TestDaemon;
  let tls: TestDaemon;
  let pki: TestPki;
  let agent: TestAgent;
  let target: Awaited<ReturnType<typeof startTarget>>;
  let agentDir: string;
  beforeAll(async () => {
    pki = makePki();
    const pair = pki.issue('server', 0x1401);
    [d, tls] = await Promise.all([
      startDaemon({ env: LIMITS }),
      startDaemon({ env: LIMITS, args: ['--tls-cert', pair.certFile, '--tls-key', pair.keyFile], ca: pki.ca }),
    ]);
    // The edge forwards a body as it arrives: a route through an agent to a target that reads the whole body.
    target = await startTarget((req, res) => {
      // /early answers at once and streams, and never reads the body.
      if (req.url === '/early') return void res.writeHead(200, { 'content-type': 'text/plain' }).write('streaming\n');
      req.resume();
      req.on('end', () => res.end('read'));
    });
    const created = await d.admin.call(operations.createAgent, { body: { name: 'slow-body-agent' } });
    const { token } = await d.admin.call(operations.rotateAgentToken, { params: { id: created.id } });
    agentDir = mkdtempSync(join(tmpdir(), 'monctl-agent-'));
    writeFileSync(join(agentDir, 'token'), `${token}\n`, { mode: 0o600 });
    agent = startAgent(d.url, join(agentDir, 'token'));
    await until(async () => (await d.admin.call(operations.getAgent, { params: { id: created.id } })).status === 'CONNECTED');
    await d.admin.call(operations.createRoute, {
      body: { name: 'slow', type: 'HTTP', agentId: created.id, target: target.url, hostname: 'slow.test' },
    });
  });
  afterAll(async () => {
    await agent?.stop('SIGKILL');
    await Promise.all([d?.stop(), tls?.stop(), target?.close()]);
    pki?.cleanup();
    if (agentDir) rmSync(agentDir, { recursive: true, force: true });
  });

  it('API (plain HTTP and HTTPS) and edge listeners: 408 and closed while the client is still sending', async () => {
    const api = address(d.url);
    const edge = address(d.edgeUrl);
    const https = address(tls.url);
    const auth = (t: TestDaemon) => ({ authorization: `Bearer ${t.adminKey}` });
    const [onApi, onEdge, onHttps, onEarly] = await Promise.all([
      trickle(() => tcpConnect(api.port, api.host), '127.0.0.1', '/admin/api/groups', auth(d)),
      trickle(() => tcpConnect(edge.port, edge.host), 'slow.test', '/upload'),
      trickle(() => tlsConnect({ host: https.host, port: https.port, ca: pki.ca }), '127.0.0.1', '/admin/api/groups', auth(tls)),
      trickle(() => tcpConnect(edge.port, edge.host), 'slow.test', '/early'),
    ]);
    expectCutOff(onApi, 'API listener');
    expectCutOff(onHttps, 'HTTPS API listener');
    expectCutOff(onEdge, 'edge listener');
    expect(onEarly.cutOff, 'a response already streaming: closed too').toBe(true);
    expect(onEarly.text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    // Not a second status line spliced into the streamed body.
    expect(onEarly.text).not.toContain('HTTP/1.1 408');
    for (const t of [d, tls]) {
      expect(t.proc.exitCode).toBeNull();
      expect(t.logs.filter((l) => typeof l.level === 'number' && l.level >= 50)).toEqual([]);
    }
  }, 60_000);
});
