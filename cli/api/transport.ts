import type { Socket } from 'node:net';
import { ExitCode, MonctlError } from '../../src/errors.ts';
import { explainCertificateFailure } from '../../src/tls/certificate-error.ts';
import { VERSION } from '../../src/version.ts';

/**
 * A minimal HTTP/1.1 client over node:net (node:tls for https). The CLI starts
 * cold on every call, and loading node:http or undici costs more than the
 * whole rest of a `monctl resources list`; one request per connection with
 * `Connection: close` needs none of their machinery.
 */
export interface WireResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
}

/** What every CLI request carries besides its credential. */
export function baseHeaders(): Record<string, string> {
  return { 'user-agent': `monctl/${VERSION}`, accept: 'application/json' };
}

export async function send(
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: string | Buffer,
  timeoutMs = 30_000,
): Promise<WireResponse> {
  const u = new URL(url);
  const https = u.protocol === 'https:';
  const port = Number(u.port || (https ? 443 : 80));
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const payload = body === undefined || Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
  const lines = [`${method} ${u.pathname}${u.search} HTTP/1.1`, `host: ${u.host}`, 'connection: close'];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  if (payload) lines.push(`content-length: ${payload.length}`);
  const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');

  // Through getBuiltinModule: an ESM facade of node:net would only add to the cold start.
  // SNI carries host names only: Node warns (DEP0123) on an IP address, and checks the certificate's IP SAN without it.
  const net = process.getBuiltinModule('node:net');
  const socket: Socket = https
    ? process.getBuiltinModule('node:tls').connect({ host, port, ...(net.isIP(host) ? {} : { servername: host }) })
    : net.connect({ host, port });
  const raw = await new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error('ETIMEDOUT')));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', () => resolve(Buffer.concat(chunks)));
    socket.on('error', reject);
    socket.write(payload ? Buffer.concat([head, payload]) : head);
  }).catch((err: NodeJS.ErrnoException) => {
    // EPROTO on https: the other end answered, but not with TLS (a plain-HTTP daemon).
    const plain =
      https && err.code === 'EPROTO'
        ? `cannot reach ${u.origin}: it does not speak TLS there (EPROTO); for a plain-HTTP daemon use http://`
        : undefined;
    const message = explainCertificateFailure(u.origin, err) ?? plain ?? `cannot reach ${u.origin}: ${err.code ?? err.message}`;
    throw new MonctlError('connection', message, ExitCode.error, { cause: err });
  });
  // An HTTPS listener closes a plain-HTTP connection without a byte.
  if (raw.length === 0 && !https)
    throw new MonctlError('connection', `${u.origin} closed the connection without answering; if it serves HTTPS, use https://`);
  return parse(raw, u.origin);
}

function parse(raw: Buffer, origin: string): WireResponse {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) throw new MonctlError('connection', `incomplete response from ${origin}`);
  const [statusLine, ...headerLines] = raw.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
  if (!status) throw new MonctlError('connection', `${origin} did not answer HTTP`);
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    // Several Set-Cookie lines (a login's session and a cleared step cookie) are all kept, comma-joined.
    headers[name] = name === 'set-cookie' && headers[name] ? `${headers[name]}, ${value}` : value;
  }
  let bodyBuf: Buffer | undefined = raw.subarray(end + 4);
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) bodyBuf = dechunk(bodyBuf);
  else if (headers['content-length'] !== undefined) {
    const length = Number(headers['content-length']);
    bodyBuf = bodyBuf.length < length ? undefined : bodyBuf.subarray(0, length);
  }
  // A body cut short is an error here, not a JSON syntax error later (or a truncated `-o json`).
  if (!bodyBuf) throw new MonctlError('connection', `incomplete response from ${origin}`);
  return { status, headers, text: bodyBuf.toString('utf8') };
}

/** The body of a chunked message; undefined when the last (empty) chunk never came. */
function dechunk(buf: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let at = 0;
  while (at < buf.length) {
    const nl = buf.indexOf('\r\n', at);
    if (nl < 0) break;
    const size = parseInt(buf.subarray(at, nl).toString('latin1'), 16);
    if (size === 0) return Buffer.concat(parts);
    if (!size || nl + 2 + size > buf.length) break;
    parts.push(buf.subarray(nl + 2, nl + 2 + size));
    at = nl + 2 + size + 2;
  }
  return undefined;
}
