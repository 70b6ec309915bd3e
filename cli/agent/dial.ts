import type { Socket } from 'node:net';

/** A dial refused by the daemon (401, 429, 503, …): worth logging, then retried with backoff. */
export class DialRefused extends Error {
  readonly status: number;
  constructor(status: number, detail: string) {
    super(detail);
    this.status = status;
  }
}

export interface UpgradeRequest {
  url: URL;
  headers: Record<string, string>;
  /** Roots for an https:// daemon (default roots when absent). */
  ca?: string[];
  timeoutMs: number;
}

const MAX_HEAD = 16 * 1024;
const MAX_BODY = 4096;

/**
 * `GET url` with an HTTP/1.1 Upgrade on a connection of its own, without
 * node:http: the agent needs nothing else of it, and its client half costs
 * 1.4 MB of RSS. On 101, `attach` gets the socket before any byte after the
 * response head is read from it, so the tunnel's first frames are never lost;
 * `attach` also gets the 101's header fields (names lowercased), and may throw to refuse it;
 * any other answer rejects with DialRefused and the problem's detail.
 */
export function dialUpgrade<T>(req: UpgradeRequest, attach: (socket: Socket, headers: Record<string, string>) => T): Promise<T> {
  const { url } = req;
  const https = url.protocol === 'https:';
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = Number(url.port) || (https ? 443 : 80);
  const lines = [
    `GET ${url.pathname}${url.search} HTTP/1.1`,
    `Host: ${url.host}`,
    ...Object.entries(req.headers).map(([k, v]) => `${k}: ${v}`),
  ];
  // A token file with a line break in it must not become a header of its own.
  if (lines.some((l) => /[\r\n]/.test(l))) return Promise.reject(new Error('a header of the dial (the token?) holds a line break'));
  const net = process.getBuiltinModule('node:net');
  const socket: Socket = https
    ? process.getBuiltinModule('node:tls').connect({
        host,
        port,
        ...(req.ca ? { ca: req.ca } : {}),
        // No SNI for an address (RFC 6066); the certificate's IP entry is still checked.
        ...(net.isIP(host) ? {} : { servername: host }),
      })
    : net.connect({ host, port });
  return new Promise((resolve, reject) => {
    let head = Buffer.alloc(0);
    let status = 0;
    let length = Number.POSITIVE_INFINITY;
    let body = '';
    let done = false;
    const fail = (err: Error) => {
      if (done) return;
      done = true;
      socket.destroy();
      reject(err);
    };
    const refuse = () => {
      let detail = body;
      try {
        detail = JSON.parse(body).detail ?? body;
      } catch {
        /* not problem+json */
      }
      fail(new DialRefused(status, `daemon answered ${status}: ${detail}`));
    };
    const onData = (chunk: Buffer) => {
      if (status === 0) {
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) return void (head.length > MAX_HEAD && fail(new Error('daemon answered with an oversized response head')));
        const [statusLine, ...fields] = head.subarray(0, end).toString('latin1').split('\r\n');
        status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? NaN);
        if (!(status >= 100))
          return fail(new Error(`daemon answered something that is not HTTP: ${JSON.stringify(statusLine.slice(0, 80))}`));
        const rest = head.subarray(end + 4);
        if (status === 101) {
          done = true;
          socket.off('data', onData);
          socket.off('error', fail);
          socket.off('end', onEnd);
          socket.setTimeout(0);
          socket.pause();
          let attached: T;
          try {
            attached = attach(socket, responseHeaders(fields));
          } catch (err) {
            socket.destroy();
            return reject(err as Error);
          }
          if (rest.length) socket.unshift(rest);
          socket.resume();
          return resolve(attached);
        }
        const declared = fields.find((f) => /^content-length:/i.test(f));
        if (declared) length = Number(declared.slice(declared.indexOf(':') + 1).trim());
        chunk = rest;
      }
      if (body.length < MAX_BODY) body += chunk.toString('utf8');
      if (Buffer.byteLength(body) >= Math.min(length, MAX_BODY)) refuse();
    };
    const onEnd = () => (status && status !== 101 ? refuse() : fail(new Error('daemon closed the connection without an answer')));
    socket.setTimeout(req.timeoutMs, () => fail(new Error(`daemon did not answer within ${req.timeoutMs / 1000} s`)));
    socket.on('error', fail);
    socket.on('data', onData);
    socket.on('end', onEnd);
    socket.once(https ? 'secureConnect' : 'connect', () => socket.write(`${lines.join('\r\n')}\r\n\r\n`));
  });
}

/** Header fields of a response head, names lowercased (the last of a repeated name wins). */
function responseHeaders(fields: string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const field of fields) {
    const colon = field.indexOf(':');
    if (colon > 0) headers[field.slice(0, colon).trim().toLowerCase()] = field.slice(colon + 1).trim();
  }
  return headers;
}
