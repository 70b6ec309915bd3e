import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import type { TestDaemon } from '../helpers/daemon.ts';
import { bearer, login, send, until } from '../helpers/http.ts';
import { type Pods, startPods } from './pods.ts';
import { stream } from './sse-stream.ts';

/** Opens a stream on `pod` and waits for its SNAPSHOT. */
async function open(pod: TestDaemon, path: string, auth: string | Record<string, string>) {
  const s = stream(pod.url, path, auth);
  await until(() => s.ended || s.kinds().includes('SNAPSHOT'));
  expect(s.status).toBe(200);
  return s;
}

/**
 * Issue 25 on pods: a credential taken away through pod A ends the streams it
 * opened on pod B (the writes' table triggers reach every pod), and B refuses
 * the reconnect. One test per credential table: api_keys, users, sessions.
 */
describe('streams end with their credentials on every pod', () => {
  let cluster: Pods;
  let a: TestDaemon;
  let b: TestDaemon;

  beforeAll(async () => {
    cluster = await startPods(2);
    [a, b] = cluster.pods;
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it('a key revoked on pod A ends its topology stream on pod B', async () => {
    const key = await a.admin.call(operations.createApiKey, { body: { name: 'pod-key', role: 'ADMIN' } });
    const other = await a.admin.call(operations.createApiKey, { body: { name: 'pod-bystander', role: 'ADMIN' } });
    const topology = await open(b, '/admin/sse/topology', key.token);
    const bystander = await open(b, '/admin/sse/topology', other.token);
    await a.admin.call(operations.revokeApiKey, { params: { id: key.id } });
    await topology.done;
    expect(bystander.ended).toBe(false);
    expect((await send(b.url, 'GET', '/admin/sse/topology', { headers: bearer(key.token) })).status).toBe(401);
    await bystander.close();
  }, 30_000);

  it('a user demoted on pod A loses their topology stream on pod B', async () => {
    const user = await a.admin.call(operations.createUser, { body: { username: 'pia', password: 'pia-password-1', role: 'ADMIN' } });
    const { jar } = await login(b.url, 'pia', 'pia-password-1');
    const topology = await open(b, '/admin/sse/topology', jar.header());
    await a.admin.call(operations.updateUser, { params: { id: user.id }, body: { role: 'USER' } });
    await topology.done;
    expect((await send(b.url, 'GET', '/admin/sse/topology', { headers: jar.header() })).status).toBe(403);
  }, 30_000);

  it('a session logged out on pod A ends its stream on pod B', async () => {
    await a.admin.call(operations.createUser, { body: { username: 'lia', password: 'lia-password-1', role: 'ADMIN' } });
    const { jar, csrf } = await login(a.url, 'lia', 'lia-password-1');
    const topology = await open(b, '/admin/sse/topology', jar.header());
    expect((await send(a.url, 'POST', '/logout', { headers: { ...jar.header(), 'x-csrf-token': csrf } })).status).toBe(302);
    await topology.done;
    expect((await send(b.url, 'GET', '/admin/sse/topology', { headers: jar.header() })).status).toBe(401);
  }, 30_000);
});
