import { afterEach, describe, expect, it } from 'vitest';
import { FRAME, FrameReader } from '../../src/tunnel/mux/frame.ts';
import { FrameWriter } from '../../src/tunnel/mux/writer.ts';
import { closeAll, socketPair, until } from './mux-helpers.ts';

afterEach(closeAll);

/** Frame n's payload: its size cycles through 0 to past the copy limit, its bytes say which frame it is. */
function payload(n: number): Buffer {
  const size = [0, 1, 200, 4096, 4097, 20_000][n % 6];
  const b = Buffer.alloc(size);
  for (let i = 0; i < size; i++) b[i] = (n * 31 + i) & 0xff;
  return b;
}

/** Parses what the server side receives into one record per frame. */
function collect() {
  const frames: Array<{ type: number; id: number; payload: Buffer }> = [];
  const parts = new Map<number, Buffer[]>();
  const reader = new FrameReader({
    data(id, piece) {
      (parts.get(id) ?? parts.set(id, []).get(id)!).push(Buffer.from(piece));
    },
    control(type, id, body) {
      frames.push({ type, id, payload: Buffer.from(body) });
    },
    invalid(message) {
      throw new Error(message);
    },
  });
  return { reader, frames, parts };
}

describe('mux frame writer', () => {
  it('writes the small frames of one turn as one socket write', async () => {
    const { server, client } = await socketPair();
    const writer = new FrameWriter(client);
    const { reader, frames } = collect();
    server.on('data', (c: Buffer) => reader.push(c));
    let writes = 0;
    const write = client.write.bind(client);
    client.write = ((...args: Parameters<typeof write>) => {
      writes++;
      return write(...args);
    }) as typeof client.write;
    for (let id = 1; id <= 4; id++) {
      writer.send(FRAME.OPEN, id, Buffer.from(`{"stream":${id}}`));
      writer.send(FRAME.WINDOW, id, Buffer.alloc(4, id));
    }
    writer.send(FRAME.PING, 0);
    writer.flush();
    expect(writes).toBe(1);
    await until(() => frames.length === 9);
    expect(frames.map((f) => [f.type, f.id, f.payload.toString('hex')])).toEqual([
      ...[1, 2, 3, 4].flatMap((id) => [
        [FRAME.OPEN, id, Buffer.from(`{"stream":${id}}`).toString('hex')],
        [FRAME.WINDOW, id, Buffer.alloc(4, id).toString('hex')],
      ]),
      [FRAME.PING, 0, ''],
    ]);
  });

  it('never overwrites bytes the socket still holds while the peer does not read', async () => {
    const { server, client } = await socketPair();
    const writer = new FrameWriter(client);
    server.pause();
    const { reader, frames, parts } = collect();
    let received = 0;
    server.on('data', (c: Buffer) => {
      received += c.length;
      reader.push(c);
    });
    // Each frame on its own stream id, DATA and control alternating; flushed in turns of 10.
    const total = 6_000;
    let expectedBytes = 0;
    for (let n = 0; n < total; n++) {
      const body = payload(n);
      expectedBytes += 9 + body.length;
      writer.send(n % 2 ? FRAME.DATA : FRAME.RST, n + 1, body);
      if (n % 10 === 9) writer.flush();
      if (n === total / 2) {
        expect(client.writableLength).toBeGreaterThan(0); // the socket is holding slices: the case under test
        server.resume();
      }
      if (n % 100 === 99) await new Promise((r) => setImmediate(r));
    }
    writer.flush();
    await until(() => received === expectedBytes);
    expect(frames.length + parts.size).toBe(total);
    for (let n = 0; n < total; n++) {
      const body = payload(n);
      const got = n % 2 ? Buffer.concat(parts.get(n + 1) ?? []) : frames.find((f) => f.id === n + 1)?.payload;
      if (!got?.equals(body)) throw new Error(`frame ${n} (${body.length} bytes) arrived corrupted`);
    }
    expect(expectedBytes).toBeGreaterThan(4 * 1024 * 1024);
  });
});
