import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { operations } from '../../src/api/operations.ts';
import type { TestDaemon } from '../helpers/daemon.ts';
import { queryDb } from '../helpers/test-database.ts';
import { type Subscription, subscribe as subscribeTo } from '../monitoring/helpers.ts';

export type { Subscription };

/** An HTTP target on 127.0.0.1 whose answer the test sets (200 by default). */
export interface Target {
  url: string;
  set(status: number): void;
  close(): Promise<void>;
}

export async function target(): Promise<Target> {
  let status = 200;
  const server: Server = createServer((_req, res) => {
    res.writeHead(status, { 'content-type': 'text/plain', connection: 'close' });
    res.end('x');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    set: (s) => (status = s),
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export interface OutboxRow {
  id: number;
  kind: string;
  subject_type: string;
  resource_id: number | null;
  agent_id: number | null;
  incident_id: number | null;
  payload: string;
  suppressed: string | null;
}

/** Reads the daemon's database, SQLite or PostgreSQL (what it has committed so far); `?` placeholders. */
export function readDb<T>(d: TestDaemon, sql: string, ...params: unknown[]): Promise<T[]> {
  return queryDb<T>(d, sql, ...params);
}

export const outbox = (d: TestDaemon, where = '1 = 1', ...params: unknown[]) =>
  readDb<OutboxRow>(d, `SELECT * FROM alert_events WHERE ${where} ORDER BY id`, ...params);

/** Creates an HTTP resource through the API; extra fields go into the body. */
export async function httpResource(d: TestDaemon, name: string, url: string, extra: Record<string, unknown> = {}): Promise<number> {
  const created = await d.admin.call(operations.createResource, { body: { name, resourceType: 'HTTP', target: url, ...extra } as never });
  return created.id;
}

/** `POST /api/resources/{id}/check`: one check now, recorded like a scheduled one. */
export function checkNow(d: TestDaemon, id: number) {
  return d.admin.call(operations.checkResource, { params: { id } });
}

/** Polls until `check` returns a truthy value (the test timeout bounds it). */
export async function until<T>(check: () => Promise<T | undefined | false> | T | undefined | false, everyMs = 50): Promise<T> {
  for (;;) {
    const value = await check();
    if (value) return value;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Subscribes to `/api/events` with an API key, collecting STATUS_CHANGED and the INCIDENT_* events. */
export const subscribe = (d: TestDaemon, token: string): Subscription =>
  subscribeTo(d, token, ['SNAPSHOT', 'STATUS_CHANGED', 'INCIDENT_OPENED', 'INCIDENT_RESOLVED']);
