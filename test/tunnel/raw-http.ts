import net from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  /** The body (chunked encoding removed); after a 101, whatever the peer sent before closing. */
  body: string;
}

function dechunk(text: string): string {
  let out = '';
  let at = 0;
  for (;;) {
    const eol = text.indexOf('\r\n', at);
    if (eol < 0) return out;
    const size = Number.parseInt(text.slice(at, eol), 16);
    if (!size) return out;
    out += text.slice(eol + 2, eol + 2 + size);
    at = eol + 2 + size + 2;
  }
}

/**
 * Sends `head` byte for byte on a fresh connection to the edge (nothing on the
 * client side normalises the request target) and reads until the edge closes.
 */
export function rawRequest(edgeUrl: string, head: string): Promise<RawResponse> {
  const url = new URL(edgeUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname, () => socket.write(Buffer.from(head, 'latin1')));
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return reject(new Error(`no response head: ${JSON.stringify(text)}`));
      const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const rest = text.slice(end + 4);
      resolve({
        status: Number(statusLine.split(' ')[1]),
        headers,
        body: /chunked/i.test(headers['transfer-encoding'] ?? '') ? dechunk(rest) : rest,
      });
    });
  });
}

/** `GET <target>` with a Host header, closing after the response. */
export const rawGet = (edgeUrl: string, host: string, target: string, extra = '') =>
  rawRequest(edgeUrl, `GET ${target} HTTP/1.1\r\nHost: ${host}\r\n${extra}Connection: close\r\n\r\n`);
