import type { Channel } from '../channel.ts';

/** GOTIFY: not built yet (docs/API.md#notifiers says what it will send). */
export const gotify: Channel = {
  escape: (text) => text,
  check: () => {},
  send: () => Promise.resolve({ ok: false, statusCode: null, error: 'GOTIFY delivery is not built yet', latencyMs: 0, retryable: false }),
};
