import { afterEach, describe, expect, it } from 'vitest';
import type { MuxStream } from '../../src/tunnel/mux/stream.ts';
import { closeAll, collect, muxPair, sleep, until, writeAll } from './mux-helpers.ts';

afterEach(closeAll);

const MiB = 1024 * 1024;
const BULK = 400;
/** What the sender keeps in flight at most (writer.ts IN_FLIGHT_MAX). */
const IN_FLIGHT_MAX = 8 * MiB;

describe('mux: fair scheduling of the streams of one session', () => {
  it("sends a new stream's answer ahead of the megabytes other streams have queued", async () => {
    const { opener, acceptor, openerSocket, acceptorSocket } = await muxPair();
    // The agent-like side answers: 1 MiB on each bulk stream (as a target would, honouring
    // backpressure), two bytes on a small one.
    const body = Buffer.alloc(MiB, 'x');
    let answering = 0;
    let answered = -1;
    acceptor.on('stream', (s: MuxStream, target: { kind: string }) => {
      s.resume();
      if (target.kind === 'small') {
        answered = openerSocket.bytesRead; // one process: what the other side has read when the answer is queued
        s.end('ok');
        return void openerSocket.resume();
      }
      answering++;
      writeAll(s, body).catch(() => {}); // cut when the test ends
    });
    // The daemon-like side never reads the bulk answers: each stream takes at most its window.
    const bulk = Array.from({ length: BULK }, () => opener.open({ kind: 'bulk' }));
    for (const s of bulk) s.pause();
    await until(() => answering === BULK && openerSocket.bytesRead > MiB);
    // The daemon-like side stops reading its socket until the agent-like side has stopped writing:
    // whatever the sender queues then is ahead of, or behind, the small answer.
    openerSocket.pause();
    for (let last = -1, same = 0; same < 3; await sleep(100)) {
      same = acceptorSocket.bytesWritten === last ? same + 1 : 0;
      last = acceptorSocket.bytesWritten;
    }
    const small = opener.open({ kind: 'small' });
    small.end();
    const answer = await collect(small);
    // Bytes that reached the daemon-like side between the answer's queueing and its arrival.
    const ahead = openerSocket.bytesRead - answered;
    console.log(
      `small answer after ${(ahead / MiB).toFixed(1)} MiB of the bulk streams' (${(answered / MiB).toFixed(1)} MiB before it was queued)`,
    );
    expect(answer.toString()).toBe('ok');
    // What was ahead of it: the bytes in flight (the sockets' buffers, IN_FLIGHT_MAX), the socket
    // budget, the receiver's unreturned credit (256 KiB). In FIFO order: every stream's queued write.
    expect(ahead).toBeLessThan(IN_FLIGHT_MAX + MiB);
    expect(answered + ahead).toBeLessThan((BULK * MiB) / 2);
  });
});
