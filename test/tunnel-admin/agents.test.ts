import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { expectProblem, fieldsOf, send } from '../helpers/http.ts';
import { agent, api, dialTunnel, holdTunnel } from './helpers.ts';

const DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;
let d: TestDaemon;
beforeAll(async () => {
  d = await startDaemon();
});
afterAll(async () => {
  await d?.stop();
});

describe('agents', () => {
  it('creates a slot without a token, with the contract shape', async () => {
    const res = await api(d, 'POST', '/admin/api/agents', { name: 'edge-1.a_b' });
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({
      id: expect.any(Number),
      name: 'edge-1.a_b',
      status: 'PENDING',
      hasToken: false,
      tokenCreatedAt: null,
      connectedAt: null,
      lastSeenAt: null,
      podId: null,
      remoteAddress: null,
      version: null,
      createdAt: expect.stringMatching(DATE),
    });
    const got = await api(d, 'GET', `/admin/api/agents/${res.json().id}`);
    expect(got.json()).toEqual(res.json());
    const list = await api(d, 'GET', '/admin/api/agents');
    expect(list.json()).toContainEqual(res.json());
  });

  it('refuses a taken name with 409 and a bad name with 400 naming the field', async () => {
    await agent(d, 'dup');
    expect(fieldsOf(expectProblem(await api(d, 'POST', '/admin/api/agents', { name: 'dup' }), 409))).toEqual(['name']);
    for (const name of ['', 'a b', 'x'.repeat(65), 'é', 'a/b']) {
      expect(fieldsOf(expectProblem(await api(d, 'POST', '/admin/api/agents', { name }), 400))).toEqual(['name']);
    }
    expect(fieldsOf(expectProblem(await api(d, 'POST', '/admin/api/agents', { name: 'ok', extra: 1 }), 400))).toEqual(['extra']);
    expect(fieldsOf(expectProblem(await api(d, 'POST', '/admin/api/agents', {}), 400))).toEqual(['name']);
  });

  it('answers 404 for unknown ids and 400 for ids that are not integers', async () => {
    for (const [method, path] of [
      ['GET', '/admin/api/agents/999999'],
      ['DELETE', '/admin/api/agents/999999'],
      ['POST', '/admin/api/agents/999999/token'],
    ]) {
      expectProblem(await api(d, method, path), 404);
    }
    expect(fieldsOf(expectProblem(await api(d, 'GET', '/admin/api/agents/abc'), 400))).toEqual(['id']);
  });

  it('shows a registration token once; a new one invalidates the old at once', async () => {
    const id = await agent(d, 'tokened');
    const first = await api(d, 'POST', `/admin/api/agents/${id}/token`);
    expect(first.status).toBe(200);
    expect(Object.keys(first.json())).toEqual(['token']);
    const token1 = first.json().token as string;
    expect(token1).toMatch(/^mta_[A-Za-z0-9_-]{40,}$/);
    const after = (await api(d, 'GET', `/admin/api/agents/${id}`)).json();
    expect(after).toMatchObject({ hasToken: true, tokenCreatedAt: expect.stringMatching(DATE) });
    // Never shown again, in any read.
    for (const path of [`/admin/api/agents/${id}`, '/admin/api/agents', '/admin/api/topology']) {
      expect((await api(d, 'GET', path)).text).not.toContain(token1);
    }
    const token2 = (await api(d, 'POST', `/admin/api/agents/${id}/token`)).json().token as string;
    expect(token2).not.toBe(token1);
    expect(await dialTunnel(d.url, token1)).toBe(401);
    expect(await dialTunnel(d.url, 'mta_not-a-real-token-at-all-000000')).toBe(401);
    expect(await dialTunnel(d.url, token2)).toBe(101);
  });

  it('disconnects a session opened with a token that is rotated, or whose agent is deleted', async () => {
    const id = await agent(d, 'rotated-live');
    const token = (await api(d, 'POST', `/admin/api/agents/${id}/token`)).json().token;
    const session = await holdTunnel(d.url, token);
    try {
      expect(session.status).toBe(101);
      await api(d, 'POST', `/admin/api/agents/${id}/token`);
      await session.closed;
    } finally {
      session.destroy();
    }
    const token2 = (await api(d, 'POST', `/admin/api/agents/${id}/token`)).json().token;
    const second = await holdTunnel(d.url, token2);
    try {
      expect(second.status).toBe(101);
      await api(d, 'DELETE', `/admin/api/agents/${id}`);
      await second.closed;
      expect(await dialTunnel(d.url, token2)).toBe(401);
    } finally {
      second.destroy();
    }
  });

  it('deletes an agent with its routes; a second delete is 404', async () => {
    const id = await agent(d, 'doomed');
    const route = await api(d, 'POST', '/admin/api/routes', {
      name: 'doomed-r',
      type: 'HTTP',
      agentId: id,
      hostname: 'doomed.test',
      target: 'http://127.0.0.1:9/',
    });
    expect(route.status).toBe(200);
    const del = await api(d, 'DELETE', `/admin/api/agents/${id}`);
    expect(del.status).toBe(200);
    expect(del.json()).toEqual({ status: 'deleted' });
    expectProblem(await api(d, 'GET', `/admin/api/agents/${id}`), 404);
    expectProblem(await api(d, 'GET', `/admin/api/routes/${route.json().id}`), 404);
    expectProblem(await api(d, 'DELETE', `/admin/api/agents/${id}`), 404);
  });
});

describe('access', () => {
  const tunnelOps = Object.values(operations).filter(
    (op) =>
      op.path.startsWith('/admin/api/agents') ||
      op.path.startsWith('/admin/api/routes') ||
      op.path.startsWith('/admin/api/topology') ||
      op.path.startsWith('/admin/sse/'),
  );

  it('covers every tunnel operation', () => {
    expect(tunnelOps.map((op) => op.id).sort()).toEqual([
      'createAgent',
      'createRoute',
      'deleteAgent',
      'deleteRoute',
      'getAgent',
      'getRoute',
      'getRouteLog',
      'getTopology',
      'listAgents',
      'listRoutes',
      'rotateAgentToken',
      'routeLogEvents',
      'topologyEvents',
      'updateRoute',
    ]);
  });

  it('answers 401 with WWW-Authenticate without a credential and 403 to a USER key', async () => {
    const userKey = (await api(d, 'POST', '/admin/api/api-keys', { name: 'user-key', role: 'USER' })).json().token as string;
    for (const op of tunnelOps) {
      const path = op.path.replace('{id}', '1');
      const anon = await send(d.url, op.method, path);
      expect(expectProblem(anon, 401).status).toBe(401);
      expect(anon.headers['www-authenticate']).toBe('Bearer');
      expectProblem(await api(d, op.method, path, undefined, userKey), 403);
      expectProblem(await api(d, op.method, path, undefined, 'not-a-key'), 401);
    }
  });

  it('accepts the other credential forms', async () => {
    for (const headers of [{ authorization: `Bearer ${d.adminKey}` }, { authorization: `ApiKey ${d.adminKey}` }]) {
      expect((await send(d.url, 'GET', '/admin/api/agents', { headers })).status).toBe(200);
    }
  });
});
