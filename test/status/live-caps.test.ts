import { request } from 'node:http';
import { connect as h2connect, type ClientHttp2Session } from 'node:http2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { streamClient } from '../../daemon/status/live-caps.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { send, until } from '../helpers/http.ts';
import { makePki, type TestPki } from '../helpers/tls.ts';

const HOST = 'status.example.test';
const PATH = '/api/status-pages/main/events';

/** One live stream, open once its SNAPSHOT arrived (or refused with its status). */
interface Stream {
  status: number;
  ended(): boolean;
  close(): void;
}

function opened(
  status: number,
  onData: (listen: (chunk: Buffer) => void) => void,
  resolve: (s: Stream) => void,
  stream: Omit<Stream, 'status'>,
) {
  if (status !== 200) return resolve({ status, ...stream });
  let text = '';
  onData((chunk) => {
    text += chunk.toString();
    if (text.includes('event: SNAPSHOT')) resolve({ status, ...stream });
  });
}

/** A stream over HTTP/1.1 on a connection of its own, from `localAddress` to the API listener at `host`. */
function h1Stream(host: string, port: number, localAddress: string): Promise<Stream> {
  return new Promise((resolve, reject) => {
    let ended = false;
    const req = request({ host, port, path: PATH, localAddress, agent: false }, (res) => {
      res.on('close', () => (ended = true));
      res.on('error', () => (ended = true));
      opened(res.statusCode ?? 0, (listen) => res.on('data', listen), resolve, { ended: () => ended, close: () => req.destroy() });
      if (res.statusCode !== 200) res.resume();
    });
    req.on('error', (err) => (ended ? undefined : reject(err)));
    req.end();
  });
}

/** A stream on an HTTP/2 session to the HTTPS edge, for the page's custom hostname. */
function h2Stream(session: ClientHttp2Session): Promise<Stream> {
  return new Promise((resolve, reject) => {
    let ended = false;
    const stream = session.request({ ':path': PATH, ':authority': HOST });
    stream.on('close', () => (ended = true));
    stream.on('error', () => (ended = true));
    stream.on('response', (headers) => {
      opened(Number(headers[':status']), (listen) => stream.on('data', listen), resolve, {
        ended: () => ended,
        close: () => stream.close(),
      });
    });
    session.once('error', reject);
  });
}

/**
 * The public live stream of a status page is capped per client address
 * (IPv4 address, IPv6 /64, IPv4-mapped IPv6 as IPv4) and per connection, well
 * below the global cap: a client past its cap loses its own oldest streams,
 * and never fills the daemon for everyone else.
 */
describe('status page live streams: caps per client and per connection', () => {
  let d: TestDaemon;
  let pki: TestPki;
  let port: number;
  const streams: Stream[] = [];
  const sessions: ClientHttp2Session[] = [];

  const metric = async (line: RegExp) => {
    const text = (await send(`http://127.0.0.1:${port}`, 'GET', '/actuator/prometheus')).text;
    return Number(line.exec(text)?.[1] ?? NaN);
  };
  const keep = async (open: Promise<Stream>) => {
    const s = await open;
    streams.push(s);
    return s;
  };
  /** Every stream of the test closed, and the daemon has let go of them all. */
  const closeAll = async () => {
    for (const s of streams.splice(0)) s.close();
    for (const s of sessions.splice(0)) s.destroy();
    await until(async () => !((await metric(/^monctl_status_streams_open (\d+)/m)) > 0));
  };

  beforeAll(async () => {
    pki = makePki();
    // Dual stack: IPv4 clients arrive as ::ffff:127.0.0.x, ::1 as itself.
    d = await startDaemon({
      args: [
        '--listen',
        '[::]:0',
        '--edge-tls-listen',
        '127.0.0.1:0',
        '--status-streams-max',
        '6',
        '--status-streams-per-client',
        '3',
        '--status-streams-per-connection',
        '2',
      ],
    });
    port = Number(new URL(d.url).port);
    const group = await d.admin.call(operations.createGroup, { body: { name: 'Website', visibility: 'PUBLIC' } });
    await d.admin.call(operations.createStatusPage, {
      body: { slug: 'main', title: 'Status', groupIds: [group.id], customHostname: HOST },
    });
    const pair = pki.issueNames('status', 2, [HOST]);
    await d.admin.call(operations.uploadCertificate, { body: { certificate: pair.cert + pki.ca, privateKey: pair.key } });
  }, 60_000);
  afterAll(async () => {
    for (const s of streams) s.close();
    for (const s of sessions) s.destroy();
    await d?.stop();
    pki?.cleanup();
  });

  it('keeps a client at its cap by ending its oldest streams, and serves other addresses (IPv4 and IPv6) when it filled the global cap', async () => {
    try {
      // 127.0.0.1 opens as many streams as the whole daemon allows, one after the other.
      const own: Stream[] = [];
      for (let i = 0; i < 6; i++) own.push(await keep(h1Stream('127.0.0.1', port, '127.0.0.1')));
      expect(own.map((s) => s.status)).toEqual([200, 200, 200, 200, 200, 200]);
      // Another IPv4 address and an IPv6 one still get their streams (no 503).
      expect((await keep(h1Stream('127.0.0.1', port, '127.0.0.2'))).status).toBe(200);
      expect((await keep(h1Stream('::1', port, '::1'))).status).toBe(200);
      // The newest is always served; the three oldest went to make room, and the others took none of 127.0.0.1's.
      await expect.poll(() => own.map((s) => s.ended()), { timeout: 10_000 }).toEqual([true, true, true, false, false, false]);
      expect(await metric(/^monctl_status_streams_shed_total\{limit="client"\} (\d+)/m)).toBe(3);
      expect(await metric(/^monctl_status_streams_open (\d+)/m)).toBe(5);
    } finally {
      await closeAll();
    }
  });

  it('caps the streams of one HTTP/2 connection, below the cap of its address', async () => {
    try {
      const session = h2connect(d.edgeTlsUrl!, { ca: pki.ca, servername: HOST, localAddress: '127.0.0.3' } as never);
      sessions.push(session);
      const first = [await keep(h2Stream(session)), await keep(h2Stream(session)), await keep(h2Stream(session))];
      expect(first.map((s) => s.status)).toEqual([200, 200, 200]);
      // Two per connection: the oldest stream of the session was reset, the session itself goes on.
      await expect.poll(() => first.map((s) => s.ended()), { timeout: 10_000 }).toEqual([true, false, false]);
      expect(session.closed || session.destroyed).toBe(false);
      expect(await metric(/^monctl_status_streams_shed_total\{limit="connection"\} (\d+)/m)).toBe(1);

      // A second connection from the same address has its own two (the address's cap, three, holds them all).
      const other = h2connect(d.edgeTlsUrl!, { ca: pki.ca, servername: HOST, localAddress: '127.0.0.3' } as never);
      sessions.push(other);
      expect((await keep(h2Stream(other))).status).toBe(200);
      expect(first.slice(1).map((s) => s.ended())).toEqual([false, false]);
      expect(await metric(/^monctl_status_streams_shed_total\{limit="client"\} (\d+)/m)).toBe(3);
    } finally {
      await closeAll();
    }
  });

  it('counts a client by its IPv4 address (IPv4-mapped IPv6 too) or its IPv6 /64', () => {
    const of = (remoteAddress: string) => streamClient({ socket: { remoteAddress }, headers: {} } as never);
    expect(of('::ffff:192.0.2.7')).toBe(of('192.0.2.7'));
    expect(of('192.0.2.7')).not.toBe(of('192.0.2.8'));
    expect(of('2001:db8:1:2::1')).toBe(of('2001:db8:1:2:ffff:ffff:ffff:fffe'));
    expect(of('2001:db8:1:2::1')).not.toBe(of('2001:db8:1:3::1'));
    // ::1 is not the /64 every IPv4 client would fall in were mapped addresses read as IPv6.
    expect(of('::1')).not.toBe(of('::ffff:127.0.0.1'));
  });
});
