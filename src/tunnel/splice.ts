import type { Duplex } from 'node:stream';

/**
 * Pipes two duplexes into each other with backpressure both ways. The end of
 * one side's bytes ends the other's writable (half-close kept, as TCP routes
 * need); an error or an abrupt close of either destroys both, so a broken
 * stream never reaches the other side as a clean end. `onDone` runs once, with
 * the error if the exchange broke.
 */
export function splice(a: Duplex, b: Duplex, onDone?: (error?: Error) => void): void {
  let done = false;
  const finish = (error?: Error) => {
    if (done) return;
    done = true;
    onDone?.(error);
  };
  const broken = (error?: Error) => {
    a.destroy();
    b.destroy();
    finish(error ?? new Error('connection closed abruptly'));
  };
  for (const side of [a, b]) {
    side.on('error', broken);
    side.on('close', () => {
      if (side.readableEnded && side.writableFinished) {
        if (a.closed && b.closed) finish();
      } else broken();
    });
  }
  a.pipe(b);
  b.pipe(a);
}
