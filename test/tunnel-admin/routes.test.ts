import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { expectProblem, fieldsOf } from '../helpers/http.ts';
import { agent, api } from './helpers.ts';
import { freePort } from '../helpers/free-port.ts';

const DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;
let d: TestDaemon;
let agentId: number;
let busy: Server;
let busyPort: number;
beforeAll(async () => {
  d = await startDaemon();
  agentId = await agent(d, 'routes-agent');
  busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  busyPort = (busy.address() as { port: number }).port;
});
afterAll(async () => {
  await d?.stop();
  await new Promise((resolve) => busy?.close(resolve));
});

const post = (body: unknown) => api(d, 'POST', '/admin/api/routes', body);

describe('routes', () => {
  it('creates an HTTP route with defaults and the contract shape', async () => {
    const res = await post({ name: 'web', type: 'HTTP', agentId, hostname: 'Web.Example.TEST', target: 'https://10.0.0.1:8443/app' });
    expect(res.status, res.text).toBe(200);
    const route = res.json();
    expect(route).toEqual({
      id: expect.any(Number),
      name: 'web',
      type: 'HTTP',
      agentId,
      target: 'https://10.0.0.1:8443/app',
      hostname: 'web.example.test',
      pathPrefix: '/',
      listenPort: null,
      allowEncodedSlashes: false,
      enabled: true,
      auth: 'none',
      basicUsers: [],
      ipAllow: [],
      ipDeny: [],
      rateLimit: null,
      httpsRedirect: false, // access control (issue 17)
      sso: null, // sign-in rules of auth oidc (docs/API.md#route-sign-in)
      // A pool of one with no rules (docs/API.md#agent-pools).
      agents: [{ agentId, target: null }],
      policy: 'round-robin',
      affinity: 'none',
      healthCheck: null,
      requestHeaders: {},
      responseHeaders: {},
      hostHeader: null,
      preserveHost: false,
      stripPrefix: false,
      createdAt: expect.stringMatching(DATE),
      updatedAt: expect.stringMatching(DATE),
    });
    // The detail adds the state of the hostname's certificate on the HTTPS edge.
    expect((await api(d, 'GET', `/admin/api/routes/${route.id}`)).json()).toEqual({
      ...route,
      certificate: { state: 'NONE', certificateId: null, source: null, notAfter: null, lastError: null },
      pool: [
        {
          agentId,
          name: expect.any(String),
          connected: false,
          health: 'NOT_CHECKED',
          healthCheckedAt: null,
          healthError: null,
          inRotation: false,
          inFlight: 0,
          requests: 0,
        },
      ],
    });
    expect((await api(d, 'GET', '/admin/api/routes')).json()).toContainEqual(route);
  });

  it('creates a TCP route on a free port', async () => {
    const port = await freePort();
    const res = await post({ name: 'db', type: 'TCP', agentId, listenPort: port, target: '[::1]:5432', enabled: false });
    expect(res.status, res.text).toBe(200);
    expect(res.json()).toMatchObject({
      type: 'TCP',
      listenPort: port,
      hostname: null,
      pathPrefix: null,
      enabled: false,
      target: '[::1]:5432',
    });
  });

  it('rejects invalid routes with 400 naming the field', async () => {
    const http = { name: 'bad', type: 'HTTP', agentId, hostname: 'ok.test', target: 'http://x/' };
    const tcp = { name: 'bad', type: 'TCP', agentId, listenPort: 40000, target: 'db:5432' };
    const cases: Array<[unknown, string]> = [
      [{ ...http, hostname: undefined }, 'hostname'],
      [{ ...http, hostname: 'bad_host!' }, 'hostname'],
      [{ ...http, hostname: '-x.test' }, 'hostname'],
      [{ ...http, pathPrefix: 'api' }, 'pathPrefix'],
      [{ ...http, pathPrefix: '/a b' }, 'pathPrefix'],
      [{ ...http, pathPrefix: '/a/../b' }, 'pathPrefix'],
      [{ ...http, pathPrefix: '/a//b' }, 'pathPrefix'],
      [{ ...http, pathPrefix: '/%2e%2e/b' }, 'pathPrefix'],
      [{ ...http, pathPrefix: '/caf%c3%a9' }, 'pathPrefix'],
      [{ ...http, pathPrefix: '/a%2Fb' }, 'pathPrefix'],
      [{ ...http, allowEncodedSlashes: 'yes' }, 'allowEncodedSlashes'],
      [{ ...tcp, allowEncodedSlashes: true }, 'allowEncodedSlashes'],
      [{ ...http, target: 'ftp://x/' }, 'target'],
      [{ ...http, target: 'not a url' }, 'target'],
      [{ ...http, listenPort: 4000 }, 'listenPort'],
      [{ ...http, agentId: 999999 }, 'agentId'],
      [{ ...http, agentId: 'one' }, 'agentId'],
      [{ ...http, type: 'UDP' }, 'type'],
      [{ ...http, enabled: 'yes' }, 'enabled'],
      [{ ...http, name: 'a b' }, 'name'],
      [{ ...http, color: 'red' }, 'color'],
      [{ ...tcp, listenPort: undefined }, 'listenPort'],
      [{ ...tcp, listenPort: 0 }, 'listenPort'],
      [{ ...tcp, listenPort: 65536 }, 'listenPort'],
      [{ ...tcp, target: 'db' }, 'target'],
      [{ ...tcp, target: 'db:0' }, 'target'],
      [{ ...tcp, target: 'http://db:5432' }, 'target'],
      [{ ...tcp, hostname: 'x.test' }, 'hostname'],
    ];
    for (const [body, field] of cases) {
      expect(fieldsOf(expectProblem(await post(body), 400)), JSON.stringify(body)).toEqual([field]);
    }
    expect((await api(d, 'GET', '/admin/api/routes')).json().some((r: { name: string }) => r.name === 'bad')).toBe(false);
  });

  it('answers 409 for a taken name, hostname and prefix, or port', async () => {
    await post({ name: 'api', type: 'HTTP', agentId, hostname: 'api.test', pathPrefix: '/v1', target: 'http://x/' });
    const port = await freePort();
    expect((await post({ name: 'tcp1', type: 'TCP', agentId, listenPort: port, target: 'x:1' })).status).toBe(200);
    expect(
      fieldsOf(expectProblem(await post({ name: 'api', type: 'HTTP', agentId, hostname: 'other.test', target: 'http://x/' }), 409)),
    ).toEqual(['name']);
    expect(
      fieldsOf(
        expectProblem(
          await post({ name: 'api2', type: 'HTTP', agentId, hostname: 'API.test', pathPrefix: '/v1', target: 'http://x/' }),
          409,
        ),
      ),
    ).toEqual(['hostname']);
    expect((await post({ name: 'api3', type: 'HTTP', agentId, hostname: 'api.test', pathPrefix: '/v2', target: 'http://x/' })).status).toBe(
      200,
    );
    expect(fieldsOf(expectProblem(await post({ name: 'tcp2', type: 'TCP', agentId, listenPort: port, target: 'x:1' }), 409))).toEqual([
      'listenPort',
    ]);
    expect(fieldsOf(expectProblem(await post({ name: 'tcp3', type: 'TCP', agentId, listenPort: busyPort, target: 'x:1' }), 409))).toEqual([
      'listenPort',
    ]);
    const own = Number(new URL(d.url).port);
    expect(fieldsOf(expectProblem(await post({ name: 'tcp4', type: 'TCP', agentId, listenPort: own, target: 'x:1' }), 409))).toEqual([
      'listenPort',
    ]);
  });

  it('updates with PUT: given fields replace, others stay; a type change drops the old fields', async () => {
    const created = (
      await post({ name: 'upd', type: 'HTTP', agentId, hostname: 'upd.test', pathPrefix: '/p', target: 'http://x/' })
    ).json();
    const res = await api(d, 'PUT', `/admin/api/routes/${created.id}`, { target: 'http://y:8080/', enabled: false });
    expect(res.status, res.text).toBe(200);
    expect(res.json()).toMatchObject({
      id: created.id,
      name: 'upd',
      hostname: 'upd.test',
      pathPrefix: '/p',
      target: 'http://y:8080/',
      enabled: false,
      createdAt: created.createdAt,
    });
    const port = await freePort();
    const tcp = await api(d, 'PUT', `/admin/api/routes/${created.id}`, { type: 'TCP', listenPort: port, target: 'y:22' });
    expect(tcp.json()).toMatchObject({ type: 'TCP', hostname: null, pathPrefix: null, listenPort: port, target: 'y:22' });
    // Keeping its own port is not a clash with itself.
    expect((await api(d, 'PUT', `/admin/api/routes/${created.id}`, { name: 'upd-renamed' })).json()).toMatchObject({
      name: 'upd-renamed',
      listenPort: port,
    });
    expect(
      fieldsOf(expectProblem(await api(d, 'PUT', `/admin/api/routes/${created.id}`, { type: 'HTTP', target: 'http://x/' }), 400)),
    ).toEqual(['hostname']);
    expect(fieldsOf(expectProblem(await api(d, 'PUT', `/admin/api/routes/${created.id}`, { name: 'web' }), 409))).toEqual(['name']);
    expect(fieldsOf(expectProblem(await api(d, 'PUT', `/admin/api/routes/${created.id}`, { agentId: 424242 }), 400))).toEqual(['agentId']);
    expectProblem(await api(d, 'PUT', '/admin/api/routes/999999', { enabled: true }), 404);
    expect((await api(d, 'GET', `/admin/api/routes/${created.id}`)).json()).toMatchObject({ name: 'upd-renamed', type: 'TCP' });
  });

  it('stores allowEncodedSlashes: kept by PUT, dropped by a type change; an encoded-slash prefix needs it', async () => {
    const created = (
      await post({ name: 'slashes', type: 'HTTP', agentId, hostname: 'slashes.test', target: 'http://x/', allowEncodedSlashes: true })
    ).json();
    expect(created).toMatchObject({ allowEncodedSlashes: true });
    const kept = await api(d, 'PUT', `/admin/api/routes/${created.id}`, { pathPrefix: '/pkg/@scope%2Fname' });
    expect(kept.json()).toMatchObject({ allowEncodedSlashes: true, pathPrefix: '/pkg/@scope%2Fname' });
    expect(fieldsOf(expectProblem(await api(d, 'PUT', `/admin/api/routes/${created.id}`, { allowEncodedSlashes: false }), 400))).toEqual([
      'pathPrefix',
    ]);
    const port = await freePort();
    const tcp = await api(d, 'PUT', `/admin/api/routes/${created.id}`, { type: 'TCP', listenPort: port, target: 'y:22' });
    expect(tcp.json()).toMatchObject({ type: 'TCP', allowEncodedSlashes: false });
  });

  it('TCP routes take ipAllow, ipDeny and rateLimit (kept by PUT, in the detail); auth, basicUsers and httpsRedirect are 400 naming the field', async () => {
    const port = await freePort();
    const tcp = { name: 'tcp-acl', type: 'TCP', agentId, listenPort: port, target: 'db:5432' };
    for (const [extra, field] of [
      [{ auth: 'basic', basicUsers: [{ username: 'a', password: 'pw-a' }] }, 'auth'],
      [{ auth: 'apiKey' }, 'auth'],
      [{ basicUsers: [{ username: 'a', password: 'pw-a' }] }, 'basicUsers'],
      [{ httpsRedirect: true }, 'httpsRedirect'],
      [{ sso: { groups: ['ops'] } }, 'sso'],
    ] as const) {
      expect(fieldsOf(expectProblem(await post({ ...tcp, ...extra }), 400)), JSON.stringify(extra)).toEqual([field]);
    }
    const res = await post({
      ...tcp,
      ipAllow: ['10.0.0.0/8', '::ffff:192.168.1.1'],
      ipDeny: ['10.6.0.0/16'],
      rateLimit: { perSecond: 2, burst: 5 },
      auth: 'none',
      httpsRedirect: false,
    }); // the neutral values of the HTTP-only fields pass (a route's own detail sent back)
    expect(res.status, res.text).toBe(200);
    const created = res.json();
    const access = {
      ipAllow: ['10.0.0.0/8', '192.168.1.1/32'],
      ipDeny: ['10.6.0.0/16'],
      rateLimit: { perSecond: 2, burst: 5 },
      auth: 'none',
      httpsRedirect: false,
    };
    expect(created).toMatchObject(access);
    expect((await api(d, 'GET', `/admin/api/routes/${created.id}`)).json()).toMatchObject(access);
    expect((await api(d, 'PUT', `/admin/api/routes/${created.id}`, { target: 'db:5433' })).json()).toMatchObject(access);
    const changed = await api(d, 'PUT', `/admin/api/routes/${created.id}`, { ipDeny: [], rateLimit: null });
    expect(changed.json()).toMatchObject({ ipAllow: ['10.0.0.0/8', '192.168.1.1/32'], ipDeny: [], rateLimit: null });
    for (const [body, field] of [
      [{ httpsRedirect: true }, 'httpsRedirect'],
      [{ auth: 'apiKey' }, 'auth'],
      [{ ipAllow: ['10.0.0.0/33'] }, 'ipAllow[0]'],
    ] as const) {
      expect(fieldsOf(expectProblem(await api(d, 'PUT', `/admin/api/routes/${created.id}`, body), 400)), JSON.stringify(body)).toEqual([
        field,
      ]);
    }
    // A type change starts from no rules: an HTTP route's requests-per-second limit is no TCP connection limit.
    const http = await api(d, 'PUT', `/admin/api/routes/${created.id}`, { type: 'HTTP', hostname: 'acl.test', target: 'http://x/' });
    expect(http.json()).toMatchObject({ type: 'HTTP', ipAllow: [], ipDeny: [], rateLimit: null });
  });

  it('deletes; unknown ids are 404', async () => {
    const created = (await post({ name: 'gone', type: 'HTTP', agentId, hostname: 'gone.test', target: 'http://x/' })).json();
    expect((await api(d, 'DELETE', `/admin/api/routes/${created.id}`)).json()).toEqual({ status: 'deleted' });
    for (const [method, path] of [
      ['GET', `/admin/api/routes/${created.id}`],
      ['DELETE', `/admin/api/routes/${created.id}`],
      ['GET', `/admin/api/routes/${created.id}/log`],
      ['GET', `/admin/sse/routes/${created.id}/log`],
    ]) {
      expectProblem(await api(d, method, path), 404);
    }
  });

  it('shows the topology: this pod, agents, routes with inFlight, edges', async () => {
    const topo = (await api(d, 'GET', '/admin/api/topology')).json();
    expect(topo.pods).toEqual([
      {
        id: expect.any(Number),
        name: expect.any(String),
        startedAt: expect.stringMatching(DATE),
        version: expect.any(String),
        // The pod's load (issue 18): shards only on PostgreSQL, where pods lease them (as of the last heartbeat).
        load: {
          shards: d.databaseUrl ? expect.any(Number) : null,
          resources: expect.any(Number),
          checksTotal: expect.any(Number),
          agents: expect.any(Number),
        },
      },
    ]);
    expect(topo.agents.map((a: { id: number }) => a.id)).toContain(agentId);
    expect(topo.routes.length).toBeGreaterThan(0);
    for (const route of topo.routes) {
      expect(route.inFlight).toBe(0);
      expect(topo.edges).toContainEqual({ from: `agent:${route.agentId}`, to: `route:${route.id}`, kind: 'SERVES' });
    }
  });

  it('keeps a pool of agents; deleting one leaves the route to the others (docs/API.md#agent-pools)', async () => {
    const [a, b] = [await agent(d, 'pool-a'), await agent(d, 'pool-b')];
    const base = { name: 'pooled', type: 'HTTP', hostname: 'pool.test', target: 'http://127.0.0.1:1/' };
    expect(fieldsOf(expectProblem(await post({ ...base, agentId: b, agents: [{ agentId: a }] }), 400))).toEqual(['agents']);
    expect(fieldsOf(expectProblem(await post({ ...base, agents: [{ agentId: a }, { agentId: a }] }), 400))).toEqual(['agents[1].agentId']);
    expect(fieldsOf(expectProblem(await post({ ...base, agents: [{ agentId: a, target: 'tcp://x' }] }), 400))).toEqual([
      'agents[0].target',
    ]);
    expect(fieldsOf(expectProblem(await post({ ...base, agents: [{ agentId: a }, { agentId: 999999 }] }), 400))).toEqual([
      'agents[1].agentId',
    ]);
    expect(fieldsOf(expectProblem(await post({ ...base, agentId: a, requestHeaders: { set: { Host: 'x' } } }), 400))).toEqual([
      'requestHeaders.set',
    ]);
    expect(fieldsOf(expectProblem(await post({ ...base, agentId: a, hostHeader: 'x.test\r\nX-Evil: 1' }), 400))).toEqual(['hostHeader']);
    // A record keyed by a pattern lets other keys through unless told not to (TypeBox patternProperties).
    expect(fieldsOf(expectProblem(await post({ ...base, agentId: a, requestHeaders: { set: { 'Bad Name': 'x' } } }), 400))).toEqual([
      'requestHeaders.set.Bad Name',
    ]);
    const tcp = { name: 'pooled-tcp', type: 'TCP', agentId: a, listenPort: await freePort(), target: '127.0.0.1:1' };
    expect(fieldsOf(expectProblem(await post({ ...tcp, stripPrefix: true }), 400))).toEqual(['stripPrefix']);
    const res = await post({ ...base, agents: [{ agentId: a }, { agentId: b, target: 'http://127.0.0.1:2/' }], policy: 'failover' });
    expect(res.status, res.text).toBe(200);
    const route = res.json();
    expect(route).toMatchObject({
      agentId: a,
      policy: 'failover',
      agents: [
        { agentId: a, target: null },
        { agentId: b, target: 'http://127.0.0.1:2/' },
      ],
    });
    expect((await api(d, 'GET', '/admin/api/topology')).json().edges).toEqual(
      expect.arrayContaining([
        { from: `agent:${a}`, to: `route:${route.id}`, kind: 'SERVES' },
        { from: `agent:${b}`, to: `route:${route.id}`, kind: 'SERVES' },
      ]),
    );
    expect((await api(d, 'DELETE', `/admin/api/agents/${a}`)).status).toBe(200);
    const kept = (await api(d, 'GET', `/admin/api/routes/${route.id}`)).json();
    expect(kept).toMatchObject({ agentId: b, agents: [{ agentId: b, target: 'http://127.0.0.1:2/' }] });
    expect(kept.pool.map((m: { agentId: number }) => m.agentId)).toEqual([b]);
    expect((await api(d, 'DELETE', `/admin/api/agents/${b}`)).status).toBe(200);
    expect((await api(d, 'GET', `/admin/api/routes/${route.id}`)).status).toBe(404);
  });

  it('answers racing creates of one wildcard, in any letter case, with one route and 409s naming it (docs/API.md#wildcard-hostnames)', async () => {
    // Concurrent transactions may all pass the check: the unique index decides, and its 409 names the winner too.
    const hosts = ['*.race.test', '*.RACE.test', '*.race.TEST', '*.Race.Test'];
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        post({ name: `race-${i}`, type: 'HTTP', agentId, hostname: hosts[i % hosts.length], target: 'http://x/' }),
      ),
    );
    const won = answers.filter((r) => r.status === 200).map((r) => r.json().name as string);
    expect(won, answers.map((r) => r.text).join('\n')).toHaveLength(1);
    for (const res of answers.filter((r) => r.status !== 200)) {
      const problem = expectProblem(res, 409);
      expect(problem.errors).toEqual([{ field: 'hostname', message: `Route ${won[0]} serves *.race.test/` }]);
    }
  });
});
