import { type SseEvent, sseParser } from '../helpers/sse-frames.ts';

/**
 * A raw SSE reader (no automatic reconnect: a stream the server ends stays
 * ended). `auth`: an API key, or request headers (a session's cookie).
 */
export function stream(base: string, path: string, auth: string | Record<string, string>, lastEventId?: string) {
  const events: SseEvent[] = [];
  const controller = new AbortController();
  const parse = sseParser();
  let ended = false;
  let status: number | undefined;
  const credential = typeof auth === 'string' ? { Authorization: `Bearer ${auth}` } : auth;
  const done = fetch(`${base}${path}`, {
    headers: { ...credential, ...(lastEventId ? { 'Last-Event-ID': lastEventId } : {}) },
    signal: controller.signal,
  })
    .then(async (res) => {
      status = res.status;
      const decoder = new TextDecoder();
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>)
        events.push(...parse(decoder.decode(chunk, { stream: true })));
    })
    .catch(() => {})
    .finally(() => (ended = true));
  return {
    events,
    get ended() {
      return ended;
    },
    /** The response's status, once its headers arrived. */
    get status() {
      return status;
    },
    /** Resolves when the stream has ended (by the server, or `close`). */
    done,
    kinds: () => events.map((e) => e.event),
    close: async () => {
      controller.abort();
      await done;
    },
  };
}
