import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { createPush, historyOf, ping } from './helpers.ts';

// Bad input on the ping URLs (docs/API.md#push-checks): each gets a clear 4xx, never a 5xx, and a
// flood from one address is cut without slowing anyone else. One daemon for the file.
let d: TestDaemon;
const UUID = '0f8fad5b-d9cb-469f-a165-70867728950e';

beforeAll(async () => {
  d = await startDaemon();
});

afterAll(async () => {
  await d?.stop();
});

function problem(res: { status: number; headers: Record<string, unknown>; text: string }, status: number): any {
  expect(res.status, res.text).toBe(status);
  expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json/);
  return JSON.parse(res.text);
}

const fields = (body: any) => (body.errors ?? []).map((e: { field: string }) => e.field);

describe('malformed ping URLs', () => {
  for (const base of ['api', 'edge'] as const) {
    it(`refuses them on the ${base} listener, naming the part`, async () => {
      const url = base === 'api' ? d.url : d.edgeUrl;
      expect(fields(problem(await ping(url, '/ping/not-a-uuid'), 400))).toEqual(['uuid']);
      expect(fields(problem(await ping(url, '/ping/x/999'), 400))).toEqual(['uuid']);
      for (const code of ['999', '256', '-1', '01x', '1e2']) {
        expect(fields(problem(await ping(url, `/ping/${UUID}/${code}`), 400)), code).toEqual(['exitCode']);
      }
      const key = 'abcdefghijklmnopqrstuv';
      for (const slug of ['..', '%2e%2e', '%2E%2e', '..%2f..%2fadmin', 'a%2fb', 'a%252fb', '%ff', '%00', 'UPPER']) {
        expect(fields(problem(await ping(url, `/ping/${key}/${slug}`), 400)), slug).toEqual(['slug']);
      }
      expect(fields(problem(await ping(url, `/ping/${UUID}/start/../../admin`), 400))).toEqual(['path']);
      expect(problem(await ping(url, `/ping/${UUID}`, { method: 'DELETE' }), 405)).toMatchObject({ status: 405 });
    });
  }
});

describe('huge bodies', () => {
  it('cuts a declared huge body at once with 413, and the daemon goes on', async () => {
    const r = await createPush(d, 'huge declared');
    // Declared 50 MiB, sent in part: refused from the headers, connection closed.
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(d.url).port), '127.0.0.1', () => {
        socket.write(`POST /ping/${r.uuid} HTTP/1.1\r\nHost: x\r\nContent-Length: ${50 * 1024 * 1024}\r\n\r\n`);
        socket.write(Buffer.alloc(64 * 1024, 'a'));
      });
      let got = '';
      socket.on('data', (c) => (got += c));
      socket.on('close', () => resolve(got));
      socket.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toMatch(/connection: close/i);
    expect(await historyOf(d, r.id)).toEqual([]);
  });

  it('refuses a chunked body past 1 MiB with 413 on both listeners, recording nothing', async () => {
    const r = await createPush(d, 'huge chunked');
    for (const url of [d.url, d.edgeUrl]) {
      const res = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const socket = connect(Number(new URL(url).port), '127.0.0.1', () => {
          socket.write(`POST /ping/${r.uuid} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n`);
          const chunk = Buffer.alloc(256 * 1024, 'b');
          const frame = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]);
          for (let i = 0; i < 8; i++) socket.write(frame); // 2 MiB, never finished
        });
        let got = '';
        socket.on('data', (c) => (got += c));
        socket.on('close', () => resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(got)?.[1]), text: got }));
        socket.on('error', reject);
      });
      expect(res.status, res.text).toBe(413);
    }
    expect(await historyOf(d, r.id)).toEqual([]);
    expect((await ping(d.url, `/ping/${r.uuid}`)).status).toBe(200);
    expect((await d.admin.call(operations.health)).status).toBe('UP');
  });
});

describe('a flood', () => {
  it('is cut per address with 429 and Retry-After, while another client still gets 200 and API reads answer', async () => {
    const flooded = await createPush(d, 'flooded');
    const quiet = await createPush(d, 'quiet');
    const flood = Array.from({ length: 400 }, () => ping(d.edgeUrl, `/ping/${flooded.uuid}`, { localAddress: '127.0.0.2' }));
    // Meanwhile another client: its pings and an API read.
    const others = Array.from({ length: 5 }, () => ping(d.edgeUrl, `/ping/${quiet.uuid}`, { localAddress: '127.0.0.3' }));
    const read = d.admin.call(operations.getAdminResource, { params: { id: quiet.id } });
    const results = await Promise.all(flood);
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    const limited = results.find((r) => r.status === 429)!;
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(limited.text)).toMatchObject({ status: 429 });
    expect((await Promise.all(others)).map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect((await read).id).toBe(quiet.id);
    // Only the accepted pings were recorded: at most the check's burst.
    const recorded = (await historyOf(d, flooded.id)).length;
    expect(recorded).toBe(statuses.filter((s) => s === 200).length);
    expect(recorded).toBeLessThanOrEqual(20 + 5);
    expect((await historyOf(d, quiet.id)).length).toBe(5);
  });

  it('counts refusals in the metrics, never a 5xx', async () => {
    const text = (await d.client().raw('GET', '/actuator/prometheus')).text;
    expect(text).toMatch(/monctl_push_pings_refused_total\{status="429"\} [1-9]/);
    expect(text).toMatch(/monctl_push_pings_refused_total\{status="400"\} [1-9]/);
    expect(text).toMatch(/monctl_push_pings_total\{kind="success"\} [1-9]/);
    expect(text).not.toMatch(/monctl_push_pings_refused_total\{status="5\d\d"\}/);
  });
});
