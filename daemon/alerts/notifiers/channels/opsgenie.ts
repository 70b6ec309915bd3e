import type { Channel } from '../channel.ts';

/** OPSGENIE: not built yet (docs/API.md#notifiers says what it will send). */
export const opsgenie: Channel = {
  escape: (text) => text,
  check: () => {},
  send: () => Promise.resolve({ ok: false, statusCode: null, error: 'OPSGENIE delivery is not built yet', latencyMs: 0, retryable: false }),
};
