import { connect as h2connect, type ClientHttp2Session } from 'node:http2';

/** What the clients of `stalledH2Streams` saw. */
export interface StalledH2 {
  /** Streams whose response headers arrived. */
  answered: number;
  /** Streams closed by the server: their code (RST_STREAM's, or GOAWAY's for those it took along) and how long after their response headers. */
  resets: Array<{ code: number; afterMs: number }>;
  /** GOAWAY codes received, one per session that got one. */
  goaways: number[];
  /** Sessions the server closed. */
  closed: number;
  close(): void;
}

/**
 * The HTTP/2 slow reader of issue 25: sessions that announce a receive window
 * of 0 (per stream and for the connection), open `streams` requests each, never
 * read a byte, and keep the session busy with a PING a second.
 */
export async function stalledH2Streams(
  url: string,
  opts: {
    ca?: string;
    servername: string;
    path: string;
    sessions: number;
    streams: number;
    /** Opens a session only once the previous one's streams are all answered (a loaded machine takes the burst in steps). */
    oneByOne?: boolean;
  },
): Promise<StalledH2> {
  const sessions: ClientHttp2Session[] = [];
  const seen: StalledH2 = { answered: 0, resets: [], goaways: [], closed: 0, close: () => sessions.forEach((s) => s.destroy()) };
  for (let i = 0; i < opts.sessions; i++) {
    const session = h2connect(url, {
      ca: opts.ca,
      servername: opts.servername,
      rejectUnauthorized: opts.ca !== undefined,
      settings: { initialWindowSize: 0 },
    });
    sessions.push(session);
    session.on('error', () => {});
    session.on('goaway', (code) => seen.goaways.push(code));
    session.once('close', () => seen.closed++);
    await new Promise<void>((resolve, reject) => session.once('remoteSettings', () => resolve()).once('error', reject));
    // The connection window too (nghttp2 lowers it without a WINDOW_UPDATE): no DATA can come at all.
    session.setLocalWindowSize(0);
    const pings = setInterval(() => {
      if (!session.destroyed) session.ping(() => {});
    }, 1000);
    session.once('close', () => clearInterval(pings));
    for (let s = 0; s < opts.streams; s++) {
      const stream = session.request({ ':path': opts.path, ':authority': opts.servername });
      stream.on('error', () => {});
      let answeredAt = 0;
      stream.once('response', () => {
        answeredAt = Date.now();
        seen.answered++;
      });
      stream.once('close', () => {
        if (answeredAt) seen.resets.push({ code: stream.rstCode ?? 0, afterMs: Date.now() - answeredAt });
      });
    }
    while (opts.oneByOne && seen.answered < (i + 1) * opts.streams && !session.closed) await new Promise((r) => setTimeout(r, 50));
  }
  return seen;
}
