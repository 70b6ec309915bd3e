import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueBound } from '../../daemon/events/outbox.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { send, until } from '../helpers/http.ts';
import { agent, api } from '../tunnel-admin/helpers.ts';

const LIVE = 200;
const STALLED = 20;

let d: TestDaemon;
beforeAll(async () => {
  // A small per-subscriber bound, so that the stalled readers pass it once their kernel buffers are full.
  d = await startDaemon({ env: { MONCTL_SSE_MAX_QUEUED_BYTES: String(64 * 1024) } });
});
afterAll(async () => {
  await d?.stop();
});

interface Reader {
  socket: Socket;
  /** ROUTE_UPDATED events seen, and whether their ids followed each other without a gap. */
  updates: number;
  firstId: number;
  lastId: number;
  gapless: boolean;
  snapshot: boolean;
  closed: boolean;
}

/** A raw subscriber of the topology stream that only counts ROUTE_UPDATED frames (a parser per frame would be the test's CPU). */
function subscribe(stalled: boolean): Reader {
  const url = new URL(d.url);
  const socket = connect(Number(url.port), url.hostname);
  const reader: Reader = { socket, updates: 0, firstId: 0, lastId: 0, gapless: true, snapshot: false, closed: false };
  let buffer = '';
  socket.setEncoding('latin1');
  if (stalled) socket.pause();
  socket.on('data', (chunk: string) => {
    buffer += chunk;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (frame.includes('\nevent: SNAPSHOT\n')) reader.snapshot = true;
      if (!frame.startsWith('id: ') || !frame.includes('\nevent: ROUTE_UPDATED\n')) continue;
      const id = Number(frame.slice(4, frame.indexOf('\n')));
      if (reader.updates === 0) reader.firstId = id;
      else if (id !== reader.lastId + 1) reader.gapless = false;
      reader.lastId = id;
      reader.updates++;
    }
  });
  socket.on('close', () => (reader.closed = true));
  socket.on('error', () => {});
  socket.write(`GET /admin/sse/topology HTTP/1.1\r\nHost: ${url.host}\r\nX-API-KEY: ${d.adminKey}\r\n\r\n`);
  return reader;
}

const cutOffTotal = async () => {
  const text = (await send(d.url, 'GET', '/actuator/prometheus')).text;
  return Number(/^monctl_sse_subscribers_cut_off_total (\d+)/m.exec(text)?.[1] ?? 0);
};

describe('SSE fan-out to many subscribers', () => {
  it('cuts off every stalled subscriber at its bound while hundreds of others receive every event, in order', async () => {
    const before = await cutOffTotal();
    const live: Reader[] = [];
    const stalled: Reader[] = [];
    try {
      for (let i = 0; i < LIVE; i++) live.push(subscribe(false));
      for (let i = 0; i < STALLED; i++) stalled.push(subscribe(true));
      await until(() => live.every((r) => r.snapshot));
      const id = await agent(d, 'fanout-agent');
      const route = (
        await api(d, 'POST', '/admin/api/routes', {
          name: 'fanout',
          type: 'HTTP',
          agentId: id,
          hostname: 'fanout.test',
          target: 'http://x/',
        })
      ).json();
      // Updates four at a time until every stalled reader is cut off: their kernel buffers fill first.
      const long = 'p'.repeat(1900);
      let sent = 0;
      while ((await cutOffTotal()) < before + STALLED) {
        const batch = Array.from({ length: 50 }, () => sent++);
        for (let i = 0; i < batch.length; i += 4) {
          const results = await Promise.all(
            batch.slice(i, i + 4).map((n) => api(d, 'PUT', `/admin/api/routes/${route.id}`, { target: `http://x/${long}/${n}` })),
          );
          for (const res of results) expect(res.status).toBe(200);
        }
        expect(sent).toBeLessThan(20_000);
      }
      expect(await cutOffTotal()).toBe(before + STALLED);
      await until(() => live.every((r) => r.updates === sent));
      for (const r of live) {
        expect(r.closed).toBe(false);
        expect(r.gapless).toBe(true);
        expect([r.firstId, r.lastId]).toEqual([live[0].firstId, live[0].lastId]);
      }
      expect(live[0].lastId - live[0].firstId + 1).toBe(sent);
      // The stalled sockets, once read, end: the daemon hung up on each of them.
      for (const r of stalled) r.socket.resume();
      await until(() => stalled.every((r) => r.closed));
      for (const r of stalled) expect(r.updates).toBeLessThan(sent);
    } finally {
      for (const r of [...live, ...stalled]) r.socket.destroy();
    }
  }, 60_000);
});

describe('the per-subscriber bound', () => {
  it('is the setting up to 1,000 subscribers, then an even share of 512 MiB, never under 32 KiB', () => {
    const setting = 512 * 1024;
    expect(queueBound(setting, 1)).toBe(setting);
    expect(queueBound(setting, 1000)).toBe(setting);
    expect(queueBound(setting, 10_000)).toBe(Math.floor((512 * 2 ** 20) / 10_000));
    expect(queueBound(setting, 10_000) * 10_000).toBeLessThanOrEqual(512 * 2 ** 20);
    expect(queueBound(setting, 1_000_000)).toBe(32 * 1024);
    expect(queueBound(16 * 1024, 10_000)).toBe(16 * 1024);
  });
});
