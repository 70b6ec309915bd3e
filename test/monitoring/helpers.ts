import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { EventSource } from 'eventsource';
import { afterAll, beforeAll, expect } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
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
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
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

/** Subscribes to `/api/events` with an API key, collecting every event of `kinds` (SNAPSHOT, CHECK_COMPLETED and STATUS_CHANGED by default). */
export function subscribe(d: TestDaemon, token: string, kinds = ['SNAPSHOT', 'CHECK_COMPLETED', 'STATUS_CHANGED']): Subscription {
  const events: Subscription['events'] = [];
  const source = new EventSource(`${d.url}/api/events`, {
    fetch: (input, init) =>
      fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), Authorization: `Bearer ${token}` } }),
  });
  for (const kind of kinds) {
    source.addEventListener(kind, (e) => events.push({ kind, data: JSON.parse((e as MessageEvent).data) }));
  }
  const opened = new Promise<void>((resolve, reject) => {
    source.addEventListener('SNAPSHOT', () => resolve());
    source.onerror = (err) => reject(new Error(`event stream failed: ${String((err as { message?: string }).message)}`));
  });
  return { events, opened, close: () => source.close() };
}

/** What the seed conformance files share: a daemon, its ADMIN and USER keys, an HTTP and a TCP target. */
export interface ConformanceWorld {
  readonly d: TestDaemon;
  readonly admin: Caller;
  readonly user: Caller;
  readonly web: Awaited<ReturnType<typeof statusServer>>;
  readonly tcp: Awaited<ReturnType<typeof tcpListener>>;
  /** POST /api/resources as ADMIN; the created resource. */
  create(body: Record<string, unknown>): Promise<any>;
  /** POST /api/resources/{id}/check as ADMIN; the check's result. */
  check(id: number): Promise<any>;
}

/** Starts the world in beforeAll and stops it in afterAll of the calling file or describe. */
export function useConformanceWorld(): ConformanceWorld {
  let w: Omit<ConformanceWorld, 'create' | 'check'> | undefined;
  beforeAll(async () => {
    const [d, web, tcp] = await Promise.all([startDaemon(), statusServer(), tcpListener()]);
    const key = await d.admin.call(operations.createApiKey, { body: { name: 'user-key', role: 'USER' } });
    w = { d, web, tcp, admin: { kind: 'key', token: d.adminKey }, user: { kind: 'key', token: key.token } };
  });
  afterAll(async () => {
    await Promise.all([w?.d.stop(), w?.web.close(), w?.tcp.close()]);
  });
  const ready = () => {
    if (!w) throw new Error('useConformanceWorld: used before beforeAll ran');
    return w;
  };
  return {
    get d() {
      return ready().d;
    },
    get admin() {
      return ready().admin;
    },
    get user() {
      return ready().user;
    },
    get web() {
      return ready().web;
    },
    get tcp() {
      return ready().tcp;
    },
    create: (body) => ok(call(ready().d, ready().admin, 'POST', '/api/resources', body)),
    check: (id) => ok(call(ready().d, ready().admin, 'POST', `/api/resources/${id}/check`)),
  };
}
