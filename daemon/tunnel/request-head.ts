import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';

/** Methods node:http's client sent without a body unless one was given (the others get an empty chunked body). */
const BODYLESS = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS', 'TRACE', 'CONNECT']);

/** How the request body goes to the target: none, as received (Content-Length), or chunked. */
export type Framing = 'none' | 'raw' | 'chunked';

/** The request head the target gets, and how its body follows. */
export function requestHead(req: IncomingMessage, path: string, headers: OutgoingHttpHeaders): [string, Framing] {
  const chunked = req.headers['transfer-encoding'] !== undefined;
  if (chunked) delete headers['content-length'];
  const framing: Framing = chunked
    ? 'chunked'
    : headers['content-length'] !== undefined
      ? 'raw'
      : BODYLESS.has(req.method!)
        ? 'none'
        : 'chunked';
  let head = `${req.method} ${path} HTTP/1.1\r\n`;
  for (const name in headers) {
    const value = headers[name];
    if (Array.isArray(value)) for (const v of value) head += `${name}: ${v}\r\n`;
    else if (value !== undefined) head += `${name}: ${value}\r\n`;
  }
  head += framing === 'chunked' ? 'Connection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n' : 'Connection: keep-alive\r\n\r\n';
  return [head, framing];
}
