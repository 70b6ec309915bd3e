import { afterAll, beforeAll, expect } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { type Caller, call, ok } from './helpers.ts';

/** What the PUSH resource suites share: a daemon with a public URL, its ADMIN, and short calls. */
export const PUBLIC_URL = 'https://monctl.example.test';

export interface PushWorld {
  readonly d: TestDaemon;
  readonly admin: Caller;
  /** POST /api/resources of a PUSH resource (a fresh name unless given). */
  push(fields?: Record<string, unknown>): ReturnType<typeof call>;
  /** The admin view. */
  detail(id: number): Promise<any>;
  patch(id: number, body: Record<string, unknown>): ReturnType<typeof call>;
}

/** Starts the daemon in beforeAll and stops it in afterAll of the calling file. */
export function usePushWorld(): PushWorld {
  let d: TestDaemon | undefined;
  let named = 0;
  beforeAll(async () => {
    d = await startDaemon({ args: ['--public-url', PUBLIC_URL], env: { TZ: 'UTC' } });
  });
  afterAll(async () => {
    await d?.stop();
  });
  const daemon = () => {
    if (!d) throw new Error('usePushWorld: used before beforeAll ran');
    return d;
  };
  const admin = (): Caller => ({ kind: 'key', token: daemon().adminKey });
  return {
    get d() {
      return daemon();
    },
    get admin() {
      return admin();
    },
    push: (fields = {}) => call(daemon(), admin(), 'POST', '/api/resources', { name: `push-${++named}`, resourceType: 'PUSH', ...fields }),
    detail: (id) => ok(call(daemon(), admin(), 'GET', `/admin/api/resources/${id}`)),
    patch: (id, body) => call(daemon(), admin(), 'PATCH', `/api/resources/${id}`, body),
  };
}

/** The fields a problem names, after checking its status and type. */
export async function refused(res: ReturnType<typeof call>, status = 400): Promise<string[]> {
  const r = await res;
  expect(r.status, r.text).toBe(status);
  expect(r.headers['content-type']).toMatch(/^application\/problem\+json/);
  return r.json().errors.map((e: { field: string }) => e.field);
}
