import { EventSource } from 'eventsource';
import { HttpError, MonctlError } from '../../src/errors.ts';
import { explainCertificateFailure } from '../../src/tls/certificate-error.ts';
import type { Runtime } from '../runtime.ts';

/** Connection state of a live stream, shown by the TUIs. */
export type StreamState = 'connecting' | 'live' | 'reconnecting';

export interface StreamEvent {
  event: string;
  id: string | null;
  data: unknown;
}

export interface StreamHandlers {
  onEvent: (e: StreamEvent) => void;
  onState?: (s: StreamState) => void;
  /** The stream gave up (401/403/404 or closed for good). */
  onFatal: (err: MonctlError) => void;
}

/**
 * Why a (re)connection was refused. The daemon ends a stream when its
 * credential is revoked, expires or loses its role, and at its maximum
 * lifetime; the reconnect is then authorized again, and a refusal is final.
 */
const REFUSED: Record<number, string> = {
  401: ': the API key or session is not valid (any more): revoked, expired, logged out or its user deleted',
  403: ': the credential does not have the role this stream needs (any more)',
  404: '',
};

/**
 * Follows an SSE stream with the `eventsource` package: the API key goes in a
 * custom fetch, and the package reconnects on its own with `Last-Event-ID`,
 * so the daemon replays what was missed (or sends a fresh SNAPSHOT). A
 * stream the daemon ends (its credential changed, its lifetime is up) is
 * reconnected the same way, unseen by the views but for a short "reconnecting".
 */
export function openStream(rt: Runtime, path: string, kinds: readonly string[], h: StreamHandlers): () => void {
  const auth = rt.client.authHeaders('GET');
  // A certificate the CLI cannot verify will not verify on the next try either: fatal, not a reconnect.
  let untrusted: string | undefined;
  const es = new EventSource(`${rt.client.server}${path}`, {
    fetch: (url, init) =>
      fetch(url, { ...init, headers: { ...init.headers, ...auth } }).catch((err: unknown) => {
        untrusted = explainCertificateFailure(rt.client.server, err);
        throw err;
      }),
  });
  h.onState?.('connecting');
  es.onopen = () => h.onState?.('live');
  es.onerror = (err) => {
    if (untrusted) {
      es.close();
      h.onFatal(new MonctlError('connection', untrusted));
      return;
    }
    const code = (err as { code?: number }).code;
    if (code === 401 || code === 403 || code === 404) {
      es.close();
      h.onFatal(new HttpError(code, 'stream', `${path}: HTTP ${code}${REFUSED[code]}`));
      return;
    }
    if (es.readyState === es.CLOSED) {
      h.onFatal(new MonctlError('stream', `${path}: the stream closed (${(err as { message?: string }).message ?? 'error'})`));
      return;
    }
    h.onState?.('reconnecting');
  };
  for (const kind of kinds) {
    es.addEventListener(kind, (msg) => {
      let data: unknown;
      try {
        data = JSON.parse(msg.data);
      } catch {
        data = msg.data;
      }
      h.onEvent({ event: kind, id: msg.lastEventId || null, data });
    });
  }
  return () => es.close();
}

/** Entries that happened before the stream started (oldest first), printed as events of kind `event`. */
export interface Backlog {
  event: string;
  items: () => Promise<unknown[]>;
}

/**
 * Piped: one JSON object per line, `{event, id, data}`, until the stream
 * fails for good or the process is interrupted.
 */
export function printNdjson(rt: Runtime, path: string, kinds: readonly string[], backlog?: Backlog): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const seen = new Set<unknown>();
    let queue: StreamEvent[] | undefined = backlog ? [] : undefined;
    const print = (e: StreamEvent) => {
      const key = (e.data as { id?: unknown } | null)?.id;
      if (backlog && key !== undefined) {
        if (seen.has(key)) return;
        seen.add(key);
      }
      process.stdout.write(`${JSON.stringify(e)}\n`);
    };
    const close = openStream(rt, path, kinds, {
      onEvent: (e) => (queue ? queue.push(e) : print(e)),
      onState: (s) => s === 'reconnecting' && process.stderr.write('stream interrupted; reconnecting…\n'),
      onFatal: (err) => {
        close();
        reject(err);
      },
    });
    // Subscribed first, then the past is read: nothing falls in between, duplicates are dropped by id.
    backlog?.items().then(
      (items) => {
        for (const data of items) print({ event: backlog.event, id: null, data });
        const pending = queue ?? [];
        queue = undefined;
        for (const e of pending) print(e);
      },
      (err: Error) => {
        close();
        reject(err);
      },
    );
    const stop = () => {
      close();
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    process.stdout.on('error', stop); // the reader went away (EPIPE)
  });
}
