import type { ServerResponse } from 'node:http';

/** Resolves when `res` can take more, or is closed: the wait of a response written in chunks. */
export function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
