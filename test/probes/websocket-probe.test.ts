import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Duplex } from 'node:stream';
import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { parseCheckConditions } from '../../src/probes/check-conditions.ts';
import type { ProtocolProbeContext } from '../../src/probes/protocol-probe.ts';
import type { WebSocketOptions } from '../../src/probes/types.ts';
import { MAX_MESSAGE_BYTES, probeWebSocket } from '../../src/probes/websocket-probe.ts';
import { freePort } from '../helpers/free-port.ts';
import { makePki, type TestPki } from '../helpers/tls.ts';

const ctx = (over: Partial<ProtocolProbeContext> = {}): ProtocolProbeContext => ({
  timeoutMs: 5_000,
  conditions: null,
  report: false,
  skipTLS: false,
  ...over,
});
const opts = (over: Partial<WebSocketOptions> = {}): WebSocketOptions => ({ headers: {}, send: null, ...over });
const body = (...conditions: string[]) => parseCheckConditions(conditions, 'WEBSOCKET');

const wss = new WebSocketServer({ noServer: true });
const servers: Server[] = [];
let pki: TestPki;
let plain: string;
let secure: string;
let wrongName: string;
const defaultCAs = getCACertificates('default');
/** What the server saw of each connection, by path: the handshake's headers, and the close code it got. */
const seen = new Map<string, { headers: IncomingMessage['headers']; closed: Promise<number> }>();

/** The behaviour of each path: refuse, greet, echo, stay silent, send too much, or hang up. */
function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer) {
  const path = req.url ?? '/';
  if (path === '/forbidden') return void socket.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n');
  wss.handleUpgrade(req, socket, head, (ws: WebSocket) => {
    seen.set(path, { headers: req.headers, closed: new Promise((resolve) => ws.once('close', (code) => resolve(code))) });
    if (path === '/hello') ws.send('hello');
    if (path === '/echo') ws.on('message', (data, binary) => ws.send(data, { binary }));
    if (path === '/big') ws.send(Buffer.alloc(MAX_MESSAGE_BYTES + 1, 'a'));
    if (path === '/bye') ws.close(1001);
  });
}

async function listen(server: Server, scheme: 'ws' | 'wss'): Promise<string> {
  servers.push(server.on('upgrade', upgrade));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `${scheme}://127.0.0.1:${(server.address() as { port: number }).port}`;
}

beforeAll(async () => {
  pki = makePki('monctl websocket test CA');
  const good = pki.issue('ws-good', 1);
  const wrong = pki.issueNames('ws-wrong', 2, ['other.example']);
  [plain, secure, wrongName] = await Promise.all([
    listen(createServer(), 'ws'),
    listen(createHttpsServer({ cert: good.cert, key: good.key }), 'wss'),
    listen(createHttpsServer({ cert: wrong.cert, key: wrong.key }), 'wss'),
  ]);
  // The verified case trusts the test CA the way a host trusts its own (NODE_EXTRA_CA_CERTS, --ca-file).
  setDefaultCACertificates([...defaultCAs, pki.ca]);
});

afterAll(async () => {
  setDefaultCACertificates(defaultCAs);
  for (const client of wss.clients) client.terminate();
  wss.close();
  for (const s of servers) s.closeAllConnections();
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  pki?.cleanup();
});

describe('WEBSOCKET checks against a ws server', () => {
  it('the handshake alone is AVAILABLE, with the headers sent, and the socket closed properly (1000)', async () => {
    const result = await probeWebSocket(`${plain}/headers`, opts({ headers: { 'X-Probe': 'monctl', Authorization: 'Bearer t' } }), ctx());
    expect(result).toMatchObject({ status: 'AVAILABLE', errorCode: null });
    const server = seen.get('/headers')!;
    expect(server.headers['x-probe']).toBe('monctl');
    expect(server.headers.authorization).toBe('Bearer t');
    expect(await server.closed).toBe(1000);
  });

  it('[BODY] waits for the first message: a greeting, or the echo of what was sent', async () => {
    const hello = await probeWebSocket(`${plain}/hello`, opts(), ctx({ conditions: body('[BODY] == hello'), report: true }));
    expect(hello).toMatchObject({ status: 'AVAILABLE' });
    expect(hello.report?.conditions).toMatchObject([{ condition: '[BODY] == hello', ok: true }]);
    const echo = await probeWebSocket(`${plain}/echo`, opts({ send: '{"ping":1}' }), ctx({ conditions: body('[BODY].ping == 1') }));
    expect(echo).toMatchObject({ status: 'AVAILABLE' });
    const wrong = await probeWebSocket(`${plain}/echo`, opts({ send: 'pong' }), ctx({ conditions: body('[BODY] == ping') }));
    expect(wrong).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONDITION_FAILED', message: '[BODY] (pong) == ping' });
  });

  it('a message over 64 KiB fails [BODY] as over the cap; silence and a hang-up are WEBSOCKET_ERROR', async () => {
    const big = await probeWebSocket(`${plain}/big`, opts(), ctx({ conditions: body('len([BODY]) > 0') }));
    expect(big).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONDITION_FAILED' });
    expect(big.message).toMatch(/over the size cap/);
    const silent = await probeWebSocket(`${plain}/silent`, opts(), ctx({ timeoutMs: 300, conditions: body('[BODY] == x') }));
    expect(silent).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'WEBSOCKET_ERROR', message: 'no message within 300 ms' });
    const bye = await probeWebSocket(`${plain}/bye`, opts(), ctx({ conditions: body('[BODY] == x') }));
    expect(bye).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'WEBSOCKET_ERROR' });
    expect(bye.message).toMatch(/closed the connection \(1001\)/);
  });

  it('a refused upgrade is WEBSOCKET_ERROR with the HTTP status; a closed port CONNECTION_ERROR', async () => {
    expect(await probeWebSocket(`${plain}/forbidden`, opts(), ctx())).toMatchObject({
      status: 'NOT_AVAILABLE',
      errorCode: 'WEBSOCKET_ERROR',
      message: 'upgrade refused: 403 Forbidden',
    });
    const refused = await probeWebSocket(`ws://127.0.0.1:${await freePort()}/`, opts(), ctx());
    expect(refused).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONNECTION_ERROR' });
    expect(refused.message).toMatch(/ECONNREFUSED/);
    expect(await probeWebSocket('http://127.0.0.1/', opts(), ctx())).toMatchObject({ errorCode: 'CONNECTION_ERROR' });
  });

  it('wss: a trusted certificate passes with its expiry; the wrong name is TLS_ERROR; skipTLS passes it', async () => {
    const good = await probeWebSocket(`${secure}/`, opts(), ctx({ conditions: body('[CERTIFICATE_EXPIRATION] > 1h') }));
    expect(good).toMatchObject({ status: 'AVAILABLE', errorCode: null });
    expect(good.certNotAfter).toBeGreaterThan(Date.now());
    const wrong = await probeWebSocket(`${wrongName}/`, opts(), ctx());
    expect(wrong).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'TLS_ERROR' });
    expect(wrong.message).toMatch(/altnames|ERR_TLS_CERT_ALTNAME_INVALID/);
    expect(await probeWebSocket(`${wrongName}/`, opts(), ctx({ skipTLS: true }))).toMatchObject({ status: 'AVAILABLE' });
  });
});
