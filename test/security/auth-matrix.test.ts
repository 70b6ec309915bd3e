import { request } from 'node:http';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { bearer, login, send, until } from '../helpers/http.ts';

/**
 * docs/API.md#roles-and-access as a matrix generated from the OpenAPI document: every
 * operation, called by every kind of caller, must be let through or refused
 * exactly as its declared access says. "Let through" means the request got
 * past authentication (any status but 401/403: a 404 for the unknown id the
 * matrix uses, a 400 for its empty body, 200 for reads and streams).
 */
type Access = 'public' | 'authenticated' | 'admin';
interface Op {
  id: string;
  method: string;
  path: string;
  access: Access;
  stream: boolean;
}
interface Caller {
  name: string;
  headers: () => Record<string, string>;
  expect: (op: Op) => 'pass' | 401 | 403;
}

let d: TestDaemon;
const ops: Op[] = [];
const creds: Record<string, Record<string, string>> = {};

/** Status only: streams never end, so the body is not read. */
function statusOf(op: Op, headers: Record<string, string>): Promise<number> {
  const url = new URL(d.url);
  const path =
    op.path.replace(/\{\w+\}/g, '987654321') + (op.path.endsWith('cors-origins') && op.method === 'DELETE' ? '?origin=https://x.test' : '');
  const body = ['POST', 'PUT', 'PATCH'].includes(op.method) ? '{}' : undefined;
  const all: Record<string, string | number> = { ...headers };
  if (body) Object.assign(all, { 'content-type': 'application/json', 'content-length': body.length });
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method: op.method, path, headers: all, agent: false }, (res) => {
      resolve(res.statusCode!);
      res.destroy();
    });
    req.on('error', reject);
    req.end(body);
  });
}

const unsafe = (op: Op) => op.method !== 'GET';
const invalid: Caller['expect'] = () => 401;
const callers: Caller[] = [
  { name: 'anonymous', headers: () => ({}), expect: (op) => (op.access === 'public' ? 'pass' : 401) },
  { name: 'USER session with CSRF', headers: () => creds.userSession, expect: (op) => (op.access === 'admin' ? 403 : 'pass') },
  { name: 'ADMIN session without CSRF', headers: () => creds.adminSessionNoCsrf, expect: (op) => (unsafe(op) ? 403 : 'pass') },
  { name: 'USER key', headers: () => creds.userKey, expect: (op) => (op.access === 'admin' ? 403 : 'pass') },
  { name: 'ADMIN key', headers: () => creds.adminKey, expect: () => 'pass' },
  { name: 'revoked key', headers: () => creds.revoked, expect: invalid },
  { name: 'expired key', headers: () => creds.expired, expect: invalid },
  { name: 'JWT signed with another secret', headers: () => creds.otherSecret, expect: invalid },
  { name: 'alg: none JWT', headers: () => creds.algNone, expect: invalid },
  { name: 'registration token as API key', headers: () => creds.registration, expect: invalid },
];

beforeAll(async () => {
  d = await startDaemon();
  const doc = (await (await fetch(`${d.url}/v3/api-docs`)).json()) as { paths: Record<string, Record<string, any>> };
  for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      ops.push({
        id: op.operationId,
        method: method.toUpperCase(),
        path,
        access: op['x-monctl-access'],
        stream: Boolean(op.responses?.['200']?.content?.['text/event-stream']),
      });
    }
  }
  const admin = d.admin;
  const post = (path: string, body: unknown) => admin.raw('POST', path, JSON.stringify(body)).then((r) => JSON.parse(r.text));
  creds.adminKey = bearer(d.adminKey);
  await post('/admin/api/users', { username: 'matrix-user', password: 'matrix-user-password', role: 'USER' });
  creds.userKey = bearer((await post('/admin/api/api-keys', { name: 'matrix-user-key', role: 'USER' })).token);
  const revoked = await post('/admin/api/api-keys', { name: 'matrix-revoked' });
  await admin.raw('DELETE', `/admin/api/api-keys/${revoked.id}`);
  creds.revoked = bearer(revoked.token);
  const expiring = await post('/admin/api/api-keys', { name: 'matrix-expired', expiresAt: new Date(Date.now() + 1500).toISOString() });
  creds.expired = bearer(expiring.token);
  const payload = JSON.parse(Buffer.from(d.adminKey.split('.')[1], 'base64url').toString());
  creds.otherSecret = bearer(await new SignJWT(payload).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(new Uint8Array(32).fill(7)));
  const none = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  creds.algNone = bearer(`${none({ alg: 'none', typ: 'JWT' })}.${none(payload)}.`);
  const agent = await post('/admin/api/agents', { name: 'matrix-agent' });
  creds.registration = bearer((await post(`/admin/api/agents/${agent.id}/token`, undefined as never)).token);
  const user = await login(d.url, 'matrix-user', 'matrix-user-password');
  creds.userSession = { ...user.jar.header(), 'x-csrf-token': user.csrf };
  const adminSession = await login(d.url, 'admin', (await import('../helpers/daemon.ts')).ADMIN_PASSWORD);
  creds.adminSessionNoCsrf = adminSession.jar.header();
  await until(async () => (await send(d.url, 'GET', '/api/me', { headers: creds.expired })).status === 401);
});

afterAll(async () => {
  await d?.stop();
});

describe('authentication matrix from the OpenAPI document', () => {
  it('covers every operation, each with a declared access', () => {
    expect(ops.length).toBeGreaterThan(40);
    for (const op of ops) expect(['public', 'authenticated', 'admin'], op.id).toContain(op.access);
  });

  for (const caller of callers) {
    it(`${caller.name}: every operation answers as its access requires`, async () => {
      const wrong: string[] = [];
      for (const op of ops) {
        const status = await statusOf(op, caller.headers());
        const want = caller.expect(op);
        const ok = want === 'pass' ? status !== 401 && status !== 403 && status < 500 : status === want;
        if (!ok) wrong.push(`${op.method} ${op.path} (${op.access}): got ${status}, want ${want}`);
      }
      expect(wrong).toEqual([]);
    });
  }
});
