import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The loopback server the push channels' receivers share: it records every request (with its
 * arrival time, to observe retries), answers queued replies first, then runs the provider's
 * checks. The receivers, each written from its provider's public API documentation and as strict
 * as it is: Telegram in telegram-receiver.ts, Pushover and Gotify in push-receivers.ts.
 */
export interface Hit {
  at: number;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}
export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}
export interface ProviderReceiver<T> {
  url: string;
  hits: Hit[];
  /** Payloads that passed every check, in order. */
  accepted: T[];
  /** Why requests were refused by the checks (400s the sender did not mean to provoke). */
  refused: string[];
  queue(...replies: Reply[]): void;
  close(): Promise<void>;
}

export async function serve<T>(
  check: (hit: Hit) => { payload: T; reply: Reply } | { refused: string; reply: Reply },
): Promise<ProviderReceiver<T>> {
  const hits: Hit[] = [];
  const accepted: T[] = [];
  const refused: string[] = [];
  const queued: Reply[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const hit = {
        at: Date.now(),
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      };
      hits.push(hit);
      let reply = queued.shift();
      if (!reply) {
        const result = check(hit);
        if ('payload' in result) accepted.push(result.payload);
        else refused.push(result.refused);
        reply = result.reply;
      }
      res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers }).end(JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    accepted,
    refused,
    queue: (...replies) => queued.push(...replies),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const json = (hit: Hit): Record<string, unknown> | undefined => {
  if (!/^application\/json/.test(String(hit.headers['content-type']))) return undefined;
  try {
    return JSON.parse(hit.body) as Record<string, unknown>;
  } catch {
    return undefined;
  }
};
