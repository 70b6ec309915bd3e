import type { Channel } from '../channel.ts';

/** TEAMS: not built yet (docs/API.md#notifiers says what it will send). */
export const teams: Channel = {
  escape: (text) => text,
  check: () => {},
  send: () => Promise.resolve({ ok: false, statusCode: null, error: 'TEAMS delivery is not built yet', latencyMs: 0, retryable: false }),
};
