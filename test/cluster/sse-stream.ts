import { type SseEvent, sseParser } from '../helpers/sse-frames.ts';

/** A raw SSE reader (no automatic reconnect: a stream the server ends stays ended). */
export function stream(base: string, path: string, key: string, lastEventId?: string) {
  const events: SseEvent[] = [];
  const controller = new AbortController();
  const parse = sseParser();
  let ended = false;
  const done = fetch(`${base}${path}`, {
    headers: { Authorization: `Bearer ${key}`, ...(lastEventId ? { 'Last-Event-ID': lastEventId } : {}) }, signal: controller.signal,
  }).then(async (res) => {
    const decoder = new TextDecoder();
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) events.push(...parse(decoder.decode(chunk, { stream: true })));
  }).catch(() => {}).finally(() => (ended = true));
  return {
    events,
    get ended() { return ended; },
    kinds: () => events.map((e) => e.event),
    close: async () => {
      controller.abort();
      await done;
    },
  };
}
