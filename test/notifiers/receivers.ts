import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/**
 * Real receivers on 127.0.0.1 for the notifier tests: an HTTP server that
 * records what it gets and answers as a handler says, and the three kinds a
 * notifier talks to (a Standard Webhooks consumer, a Slack incoming webhook,
 * an ntfy server), each checking what the real one checks.
 */
export interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Answer {
  status: number;
  body?: string;
  /** Replace or add to `content-type: text/plain` (a JSON answer, `Retry-After`). */
  headers?: Record<string, string>;
}
export type ReceiverHandler = (req: Received) => Answer | Promise<Answer>;

export interface Receiver {
  url: string;
  received: Received[];
  /** Answers the next requests with these statuses first, then with the handler. */
  queue(...statuses: number[]): void;
  close(): Promise<void>;
}

export async function startReceiver(handler: ReceiverHandler = () => ({ status: 200 })): Promise<Receiver> {
  const received: Received[] = [];
  const queued: number[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const r: Received = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      received.push(r);
      const answer = queued.length ? { status: queued.shift()!, body: 'queued answer' } : await handler(r);
      if (answer.status === 0) return; // never answer: the sender's timeout must end it
      res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers }).end(answer.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    queue: (...statuses) => queued.push(...statuses),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A Standard Webhooks consumer: verifies the signature with the `standardwebhooks`
 * package and the secret it was given (401 when it does not check out), and
 * keeps the verified payloads.
 */
export async function startWebhookReceiver(secret: () => string): Promise<Receiver & { verified: unknown[]; refused: string[] }> {
  const verified: unknown[] = [];
  const refused: string[] = [];
  const receiver = await startReceiver((r) => {
    try {
      verified.push(new Webhook(secret()).verify(r.body, r.headers as Record<string, string>));
      return { status: 204 };
    } catch (err) {
      refused.push((err as Error).message);
      return { status: 401, body: 'bad signature' };
    }
  });
  return Object.assign(receiver, { verified, refused });
}

/** A Slack incoming webhook: the token is in the path (404 `no_service` otherwise), the payload needs `text`. */
export async function startSlackReceiver(path: string): Promise<Receiver & { texts: string[] }> {
  const texts: string[] = [];
  const receiver = await startReceiver((r) => {
    if (r.method !== 'POST' || r.path !== path) return { status: 404, body: 'no_service' };
    if (!/^application\/json/.test(String(r.headers['content-type']))) return { status: 400, body: 'invalid_payload' };
    const payload = JSON.parse(r.body) as { text?: unknown };
    if (typeof payload.text !== 'string' || payload.text === '') return { status: 400, body: 'no_text' };
    texts.push(payload.text);
    return { status: 200, body: 'ok' };
  });
  return Object.assign(receiver, { texts });
}

export interface NtfyMessage {
  topic: string;
  title?: string;
  message: string;
  priority?: number;
  tags?: string[];
  click?: string;
}

/** An ntfy server's JSON publishing: `POST /` with a topic, checked against the token it was given (401/403 otherwise). */
export async function startNtfyReceiver(token: string, topic: string): Promise<Receiver & { messages: NtfyMessage[] }> {
  const messages: NtfyMessage[] = [];
  const receiver = await startReceiver((r) => {
    if (r.method !== 'POST' || r.path !== '/') return { status: 404, body: '{"code":40401,"error":"page not found"}' };
    if (r.headers.authorization === undefined) return { status: 401, body: '{"code":40101,"error":"unauthorized"}' };
    if (r.headers.authorization !== `Bearer ${token}`) return { status: 403, body: '{"code":40301,"error":"forbidden"}' };
    const m = JSON.parse(r.body) as NtfyMessage;
    if (m.topic !== topic) return { status: 403, body: '{"code":40301,"error":"forbidden"}' };
    if (m.priority !== undefined && (!Number.isInteger(m.priority) || m.priority < 1 || m.priority > 5))
      return { status: 400, body: '{"code":40007,"error":"invalid priority"}' };
    messages.push(m);
    return { status: 200, body: JSON.stringify({ id: 'x', event: 'message', topic: m.topic }) };
  });
  return Object.assign(receiver, { messages });
}
