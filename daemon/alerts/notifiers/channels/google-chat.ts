import type { Channel } from '../channel.ts';

/** GOOGLE_CHAT: not built yet (docs/API.md#notifiers says what it will send). */
export const googleChat: Channel = {
  escape: (text) => text,
  check: () => {},
  send: () =>
    Promise.resolve({ ok: false, statusCode: null, error: 'GOOGLE_CHAT delivery is not built yet', latencyMs: 0, retryable: false }),
};
