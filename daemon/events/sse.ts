import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Channel, type HubEvent, sseFrame } from './channel.ts';

export interface StreamOptions {
  /** The current state, sent first as `SNAPSHOT` when there is nothing to replay. */
  snapshot?: () => Promise<unknown> | unknown;
  /** Per-subscriber view of an event: return undefined to drop it, or other data to send instead. */
  filter?: (event: HubEvent) => unknown;
  /** Bytes a subscriber may have unsent before it is cut off. */
  maxQueuedBytes?: number;
  heartbeatMs?: number;
  /** Called when the stream ends, for whatever reason. */
  onClose?: () => void;
}

/** Every open stream, so that shutdown can end them rather than wait for them. */
export const openStreams = new Set<ServerResponse>();

function lastEventId(req: IncomingMessage): number | undefined {
  const header = req.headers['last-event-id'];
  const raw = Array.isArray(header) ? header[0] : header;
  if (!raw || !/^\d{1,16}$/.test(raw.trim())) return undefined;
  return Number(raw.trim());
}

/**
 * Serves one Server-Sent Events subscriber (CONTRACT section 6): replay after
 * `Last-Event-ID` from the channel's buffer, else a `SNAPSHOT`; then live
 * events; `: ping` comments; and a subscriber whose unsent bytes pass the limit
 * is disconnected so that it never slows the others.
 */
export async function serveStream(req: IncomingMessage, res: ServerResponse, channel: Channel, opts: StreamOptions = {}) {
  const maxQueued = opts.maxQueuedBytes ?? 512 * 1024;
  res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
  res.flushHeaders();
  openStreams.add(res);

  let closed = false;
  let ready = false;
  const pending: HubEvent[] = [];

  const send = (event: HubEvent) => {
    if (closed) return;
    let frame = event.frame;
    if (opts.filter) {
      const view = opts.filter(event);
      if (view === undefined) return;
      if (view !== event.data) frame = sseFrame(event.seq, event.kind, view);
    }
    res.write(frame);
    if (res.writableLength > maxQueued) close(true);
  };

  // Listen before reading the snapshot, so nothing published meanwhile is lost.
  const unlisten = channel.listen((event) => (ready ? send(event) : pending.push(event)));
  const heartbeat = setInterval(() => !closed && res.write(': ping\n\n'), opts.heartbeatMs ?? 15_000);
  heartbeat.unref();

  function close(cutOff: boolean) {
    if (closed) return;
    closed = true;
    unlisten();
    clearInterval(heartbeat);
    openStreams.delete(res);
    if (cutOff) res.destroy();
    else res.end();
    opts.onClose?.();
  }
  res.on('close', () => close(false));
  req.on('close', () => close(false));

  let from = lastEventId(req);
  const replay = from === undefined ? undefined : channel.since(from);
  if (replay) {
    for (const event of replay) send(event);
  } else if (opts.snapshot) {
    const at = channel.seq;
    const state = await opts.snapshot();
    if (closed) return;
    res.write(sseFrame(at, 'SNAPSHOT', state));
    from = at;
  } else {
    from = channel.seq;
  }
  const last = replay?.at(-1)?.seq ?? from ?? channel.seq;
  for (const event of pending) if (event.seq > last) send(event);
  pending.length = 0;
  ready = true;
}

/** Ends every open stream, for shutdown. */
export function endAllStreams(): void {
  for (const res of openStreams) res.end();
  openStreams.clear();
}
