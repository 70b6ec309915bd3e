import type { Channel } from '../channel.ts';

/** PUSHOVER: not built yet (docs/API.md#notifiers says what it will send). */
export const pushover: Channel = {
  escape: (text) => text,
  check: () => {},
  send: () => Promise.resolve({ ok: false, statusCode: null, error: 'PUSHOVER delivery is not built yet', latencyMs: 0, retryable: false }),
};
