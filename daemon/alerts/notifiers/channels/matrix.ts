import type { Channel } from '../channel.ts';

/** MATRIX: not built yet (docs/API.md#notifiers says what it will send). */
export const matrix: Channel = {
  escape: (text) => text,
  check: () => {},
  send: () => Promise.resolve({ ok: false, statusCode: null, error: 'MATRIX delivery is not built yet', latencyMs: 0, retryable: false }),
};
