import type { Channel } from '../channel.ts';

/** TELEGRAM: not built yet (docs/API.md#notifiers says what it will send). */
export const telegram: Channel = {
  escape: (text) => text,
  check: () => {},
  send: () => Promise.resolve({ ok: false, statusCode: null, error: 'TELEGRAM delivery is not built yet', latencyMs: 0, retryable: false }),
};
