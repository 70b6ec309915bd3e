import type { Channel } from '../channel.ts';

/** DISCORD: not built yet (docs/API.md#notifiers says what it will send). */
export const discord: Channel = {
  escape: (text) => text,
  check: () => {},
  send: () => Promise.resolve({ ok: false, statusCode: null, error: 'DISCORD delivery is not built yet', latencyMs: 0, retryable: false }),
};
