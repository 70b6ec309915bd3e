import { createServer as createHttpServer, type Server } from 'node:http';
import { connect, createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, expectProblem, sendJson } from '../helpers/http.ts';
import { startWebhookReceiver } from '../notifiers/receivers.ts';
import { outbox, readDb } from './helpers.ts';
import { type AlertWorld, eventually, startAlertWorld } from './world.ts';

/**
 * Dependencies (docs/API.md#dependencies): `dependsOn` stored and read, its 400s, and the
 * issue's check: a database and 20 API resources that depend on it. The database is a TCP
 * listener; the APIs are one loopback HTTP server that answers 503 while the database refuses
 * connections. Killing the database's listener sends one alert, naming the 20 dependents, and
 * none for them; recovery sends one resolve.
 */
let w: AlertWorld;
let hook: Awaited<ReturnType<typeof startWebhookReceiver>>;
let secret = '';
let dbPort = 0;
let db: TcpServer | undefined;
const dbSockets = new Set<Socket>();
let api: Server;
const broken = new Set<string>(); // API paths that fail whatever the database does

function listenDb(port: number): Promise<void> {
  db = createTcpServer((s) => {
    dbSockets.add(s);
    s.on('close', () => dbSockets.delete(s));
    s.end();
  });
  return new Promise((r) => db!.listen(port, '127.0.0.1', () => r()));
}
function killDb(): Promise<void> {
  for (const s of dbSockets) s.destroy();
  return new Promise((r) => db!.close(() => r()));
}
/** Whether the database accepts a connection: what the APIs answer from. */
const dbUp = () =>
  new Promise<boolean>((r) => {
    const s = connect(dbPort, '127.0.0.1', () => (s.destroy(), r(true)));
    s.on('error', () => r(false));
  });

const call = (method: string, path: string, body?: unknown) => sendJson(w.d.url, method, path, body, bearer(w.d.adminKey));

beforeAll(async () => {
  w = await startAlertWorld();
  hook = await startWebhookReceiver(() => secret);
  await listenDb(0);
  dbPort = (db!.address() as AddressInfo).port;
  api = createHttpServer(async (req, res) => res.writeHead((await dbUp()) && !broken.has(req.url ?? '') ? 200 : 503).end());
  await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
}, 60_000);
afterAll(async () => {
  await w?.d.stop();
  await w?.target.close();
  await hook?.close();
  if (db?.listening) await killDb();
  await new Promise((r) => api?.close(r));
});

describe('dependsOn in the API', () => {
  it('takes names and ids, drops duplicates, reads back [{id, name}] sorted by id, and PATCH [] removes them', async () => {
    const a = await w.resource('dep-a');
    const b = await w.resource('dep-b');
    const c = (
      await call('POST', '/api/resources', {
        name: 'dep-c',
        resourceType: 'HTTP',
        target: `${w.target.url}/c`,
        dependsOn: ['dep-b', a.id, String(b.id)],
      })
    ).json();
    const read = (await call('GET', `/admin/api/resources/${c.id}`)).json();
    expect(read.dependsOn).toEqual([
      { id: a.id, name: 'dep-a' },
      { id: b.id, name: 'dep-b' },
    ]);
    const listed = (await call('GET', '/admin/api/resources')).json();
    expect(listed.find((r: { id: number }) => r.id === c.id).dependsOn).toHaveLength(2);
    expect(listed.find((r: { id: number }) => r.id === a.id).dependsOn).toEqual([]);
    const patched = (await call('PATCH', `/api/resources/${c.id}`, { dependsOn: [] })).json();
    expect(patched.dependsOn).toEqual([]);
  });

  it('answers 400 naming dependsOn for an unknown resource, the resource itself, and a cycle with its path', async () => {
    const x = await w.resource('cyc-x');
    const y = (
      await call('POST', '/api/resources', { name: 'cyc-y', resourceType: 'HTTP', target: `${w.target.url}/y`, dependsOn: ['cyc-x'] })
    ).json();
    const z = (
      await call('POST', '/api/resources', { name: 'cyc-z', resourceType: 'HTTP', target: `${w.target.url}/z`, dependsOn: ['cyc-y'] })
    ).json();
    const problem = async (res: Promise<Awaited<ReturnType<typeof call>>>, detail: RegExp) => {
      const body = expectProblem(await res, 400);
      expect(JSON.stringify(body)).toContain('dependsOn');
      expect(JSON.stringify(body)).toMatch(detail);
    };
    await problem(
      call('POST', '/api/resources', { name: 'nope', resourceType: 'HTTP', target: `${w.target.url}/n`, dependsOn: ['no-such-db'] }),
      /no-such-db/,
    );
    await problem(
      call('POST', '/api/resources', { name: 'selfish', resourceType: 'HTTP', target: `${w.target.url}/s`, dependsOn: ['selfish'] }),
      /selfish -> selfish/,
    );
    await problem(call('PATCH', `/api/resources/${x.id}`, { dependsOn: [x.id] }), /cyc-x -> cyc-x/);
    await problem(call('PATCH', `/api/resources/${x.id}`, { dependsOn: ['cyc-z'] }), /cyc-x -> cyc-z -> cyc-y -> cyc-x/);
    expect((await call('GET', `/admin/api/resources/${x.id}`)).json().dependsOn).toEqual([]);
    expect((await call('GET', `/admin/api/resources/${z.id}`)).json().dependsOn).toEqual([{ id: y.id, name: 'cyc-y' }]);
  });

  it('deleting a resource removes the edges to it and its own', async () => {
    const base = await w.resource('del-base');
    const mid = (
      await call('POST', '/api/resources', { name: 'del-mid', resourceType: 'HTTP', target: `${w.target.url}/m`, dependsOn: ['del-base'] })
    ).json();
    const top = (
      await call('POST', '/api/resources', { name: 'del-top', resourceType: 'HTTP', target: `${w.target.url}/t`, dependsOn: ['del-mid'] })
    ).json();
    expect((await call('DELETE', `/api/resources/${mid.id}`)).status).toBe(200);
    expect((await call('GET', `/admin/api/resources/${top.id}`)).json().dependsOn).toEqual([]);
    const edges = await readDb(w.d, 'SELECT * FROM resource_dependencies WHERE resource_id = ? OR depends_on_id = ?', mid.id, mid.id);
    expect(edges).toEqual([]);
    expect((await readDb(w.d, 'SELECT * FROM resource_dependencies WHERE depends_on_id = ?', base.id)).length).toBe(0);
  });
});

type Item = { kind: string; subject: { name: string } };
const payloads = () => hook.verified as Array<{ data: { text: string; items: Item[] } }>;
const sent = () => payloads().flatMap((p) => p.data.items.map((i) => `${i.kind} ${i.subject.name}`));
const check = (id: number) => call('POST', `/api/resources/${id}/check`);
const unrouted = async () => (await outbox(w.d, 'routed_at IS NULL')).length;

describe('alerts of dependents', () => {
  let database: { id: number };
  const apis: Array<{ id: number }> = [];

  it('killing the database sends one alert naming its 20 dependents, none for them; recovery sends one resolve', async () => {
    const n = await w.notifier('deps-hook', 'WEBHOOK', { url: `${hook.url}/hook` });
    secret = n.signingSecret!;
    await w.rule({ name: 'deps', events: ['INCIDENT_OPENED', 'INCIDENT_RESOLVED'], notifierIds: [n.id] });
    database = await w.call('POST', '/api/resources', { name: 'orders-db', resourceType: 'TCP', target: `127.0.0.1:${dbPort}` });
    for (let i = 1; i <= 20; i++) {
      const name = `api-${String(i).padStart(2, '0')}`;
      apis.push(
        await w.call('POST', '/api/resources', {
          name,
          resourceType: 'HTTP',
          target: `http://127.0.0.1:${(api.address() as AddressInfo).port}/${name}`,
          dependsOn: ['orders-db'],
        }),
      );
    }
    await killDb();
    // The database fails once (below its threshold of 3); the APIs fail three times and open their
    // incidents a moment before the database's: their alerts wait, then are inhibited.
    await check(database.id);
    await Promise.all(
      apis.map(async (a) => {
        for (let i = 0; i < 3; i++) await check(a.id);
      }),
    );
    await check(database.id);
    await check(database.id);
    await eventually('the database alert', () => sent().length > 0);
    await eventually('every opening routed', async () => (await unrouted()) === 0);
    expect(sent()).toEqual(['INCIDENT_OPENED orders-db']);
    expect(payloads()[0].data.text).toContain('and 20 dependent resources (api-01, api-02');
    const openings = await outbox(w.d, "kind = 'INCIDENT_OPENED' AND resource_id <> ?", database.id);
    expect(openings.map((e) => e.suppressed)).toEqual(Array(20).fill('inhibited'));

    await listenDb(dbPort);
    await check(database.id);
    await eventually('the database resolve', () => sent().length === 2);
    await Promise.all(apis.map((a) => check(a.id)));
    await eventually('every event routed', async () => (await unrouted()) === 0);
    // The dependents' resolutions, and their openings written again when the database recovered, are inhibited.
    expect(sent()).toEqual(['INCIDENT_OPENED orders-db', 'INCIDENT_RESOLVED orders-db']);
    const resolutions = await outbox(w.d, "kind = 'INCIDENT_RESOLVED' AND resource_id <> ?", database.id);
    expect(resolutions.map((e) => e.suppressed)).toEqual(Array(20).fill('inhibited'));
  }, 120_000);

  it('a dependent still down when its dependency recovers is alerted then, and its resolve follows', async () => {
    const before = sent().length;
    await killDb();
    for (let i = 0; i < 3; i++) await check(database.id);
    broken.add('/api-01');
    for (let i = 0; i < 3; i++) await check(apis[0].id);
    await eventually('every opening routed', async () => (await unrouted()) === 0);
    await listenDb(dbPort);
    await check(database.id);
    await eventually('the database resolve', () => sent().includes('INCIDENT_RESOLVED orders-db') && sent().length === before + 2);
    await check(apis[0].id); // still failing: its opening goes out now
    await eventually('api-01 alerted', () => sent().length === before + 3);
    broken.delete('/api-01');
    await check(apis[0].id);
    await eventually('api-01 resolved', () => sent().length === before + 4);
    expect(sent().slice(before)).toEqual([
      'INCIDENT_OPENED orders-db',
      'INCIDENT_RESOLVED orders-db',
      'INCIDENT_OPENED api-01',
      'INCIDENT_RESOLVED api-01',
    ]);
  }, 60_000);
});
