import { EventSource } from 'eventsource';
import { RouteLogEvents, TopologyEvents } from '../../src/api/schemas/tunnel.ts';

export interface Received {
  kind: string;
  id: string;
  data: any;
}

const KINDS = [...Object.keys(TopologyEvents), ...Object.keys(RouteLogEvents)];

/**
 * An `eventsource` client with the API key in X-API-KEY (and, for resuming,
 * a Last-Event-ID of our choosing). Collects every named event in order.
 */
export function watch(url: string, key: string, opts: { lastEventId?: string } = {}) {
  const events: Received[] = [];
  const waiters = new Set<() => void>();
  let failure: unknown;
  const source = new EventSource(url, {
    fetch: (input, init) =>
      fetch(input, {
        ...init,
        headers: { ...init.headers, 'X-API-KEY': key, ...(opts.lastEventId ? { 'Last-Event-ID': opts.lastEventId } : {}) },
      }),
  });
  for (const kind of KINDS) {
    source.addEventListener(kind, (e) => {
      events.push({ kind, id: e.lastEventId, data: JSON.parse(e.data) });
      for (const w of waiters) w();
    });
  }
  source.onerror = (e) => {
    failure = e;
    for (const w of waiters) w();
  };
  return {
    events,
    source,
    get failure() {
      return failure;
    },
    /** Resolves once `probe` holds for the events so far (the test timeout bounds the wait). */
    until(probe: (events: Received[]) => boolean): Promise<void> {
      return new Promise((resolve) => {
        const check = () => {
          if (probe(events)) {
            waiters.delete(check);
            resolve();
          }
        };
        waiters.add(check);
        check();
      });
    },
    close() {
      source.close();
    },
  };
}
