import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { EventSource } from 'eventsource';
import { expect } from 'vitest';
import type { TestDaemon } from '../helpers/daemon.ts';
import { type CookieJar, send, type WireResponse } from '../helpers/http.ts';

/** Exactly the wire form of every datetime the seed shows. */
export const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;

export type Caller =
  | { kind: 'anonymous' }
  | { kind: 'key'; token: string; form?: 'bearer' | 'apikey' | 'x-api-key' }
  | { kind: 'session'; jar: CookieJar; csrf?: string };

export function headersFor(caller: Caller): Record<string, string> {
  if (caller.kind === 'key') {
    if (caller.form === 'apikey') return { authorization: `ApiKey ${caller.token}` };
    if (caller.form === 'x-api-key') return { 'x-api-key': caller.token };
    return { authorization: `Bearer ${caller.token}` };
  }
  if (caller.kind === 'session') return { ...caller.jar.header(), ...(caller.csrf ? { 'x-csrf-token': caller.csrf } : {}) };
  return {};
}

/** One JSON request as `caller`; the body is serialised unless it is already a string. */
export function call(d: TestDaemon, caller: Caller, method: string, path: string, body?: unknown): Promise<WireResponse> {
  const headers = headersFor(caller);
  if (body === undefined) return send(d.url, method, path, { headers });
  return send(d.url, method, path, {
    headers: { ...headers, 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** Asserts status and returns the parsed JSON body. */
export async function ok(res: Promise<WireResponse> | WireResponse, status = 200): Promise<any> {
  const r = await res;
  expect(r.status, r.text).toBe(status);
  return r.json();
}

/** An HTTP server on 127.0.0.1 answering `/status/<code>` with that code. */
export async function statusServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const code = Number(/^\/status\/(\d{3})/.exec(req.url ?? '')?.[1] ?? 200);
    res.writeHead(code, { 'content-type': 'text/plain', connection: 'close' });
    res.end('ok');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

/** A TCP listener on 127.0.0.1 that accepts and closes. */
export async function tcpListener(): Promise<{ target: string; close(): Promise<void> }> {
  const server: TcpServer = createTcpServer((socket) => socket.end());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { target: `127.0.0.1:${port}`, close: () => new Promise((r) => server.close(() => r())) };
}

/** A port on 127.0.0.1 where nothing listens (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

export interface Subscription {
  events: Array<{ kind: string; data: any }>;
  opened: Promise<void>;
  close(): void;
}

/** Subscribes to `/api/events` with an API key, collecting every SNAPSHOT, CHECK_COMPLETED and STATUS_CHANGED. */
export function subscribe(d: TestDaemon, token: string): Subscription {
  const events: Subscription['events'] = [];
  const source = new EventSource(`${d.url}/api/events`, {
    fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), Authorization: `Bearer ${token}` } }),
  });
  for (const kind of ['SNAPSHOT', 'CHECK_COMPLETED', 'STATUS_CHANGED']) {
    source.addEventListener(kind, (e) => events.push({ kind, data: JSON.parse((e as MessageEvent).data) }));
  }
  const opened = new Promise<void>((resolve, reject) => {
    source.addEventListener('SNAPSHOT', () => resolve());
    source.onerror = (err) => reject(new Error(`event stream failed: ${String((err as { message?: string }).message)}`));
  });
  return { events, opened, close: () => source.close() };
}
