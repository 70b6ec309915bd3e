import type { Channel } from '../channel.ts';

/** PAGERDUTY: not built yet (docs/API.md#notifiers says what it will send). */
export const pagerduty: Channel = {
  escape: (text) => text,
  check: () => {},
  send: () =>
    Promise.resolve({ ok: false, statusCode: null, error: 'PAGERDUTY delivery is not built yet', latencyMs: 0, retryable: false }),
};
