import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMonctl } from '../cli/run.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { databaseBytes, queryDb } from '../helpers/test-database.ts';
import { makePki, type TestPki } from '../helpers/tls.ts';
import { type Caller, call, ok } from './helpers.ts';

// A resource's secrets (secret headers, the basic password, the bearer token, the client key) are
// sealed at rest and never leave the daemon: this file greps everything a user or an operator can
// read for them (docs/DECISIONS.md#http-request-fields).
let d: TestDaemon;
let admin: Caller;
let web: Server;
let base: string;
let pki: TestPki;
let client: { cert: string; key: string };
/** What the target server received, to show the secrets did reach it. */
const received: string[] = [];
const anon: Caller = { kind: 'anonymous' };

const SECRET = { header: 'zq-header-4b7e19', password: 'zq-password-8c2d51', token: 'zq-token-6a9f03' };
/** Distinctive parts of the client key: its base64 lines. */
const keyLines = () => client.key.split('\n').filter((l) => l.length > 20 && !l.startsWith('-----'));
const needles = () => [...Object.values(SECRET), ...keyLines()];
/** The needles found in `text`. */
const leaks = (text: string) => needles().filter((n) => text.includes(n));

/** Every response body read in this file, to grep at the end. */
const bodies: string[] = [];
async function read(caller: Caller, method: string, path: string, body?: unknown) {
  const res = await call(d, caller, method, path, body);
  bodies.push(res.text);
  return res;
}

beforeAll(async () => {
  pki = makePki();
  const server = pki.issue('target', 21);
  client = pki.issue('client', 22);
  web = createServer({ cert: server.cert, key: server.key, ca: pki.ca, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const peer = (req.socket as TLSSocket).getPeerCertificate();
    received.push(`${req.headers['x-secret'] ?? ''} ${req.headers.authorization ?? ''}${peer.subject ? ` cert:${peer.subject.O}` : ''}`);
    res.writeHead(200).end('fine');
  });
  await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
  base = `https://127.0.0.1:${(web.address() as AddressInfo).port}`;
  d = await startDaemon({ args: ['--log-level', 'trace'] });
  admin = { kind: 'key', token: d.adminKey };
});

afterAll(async () => {
  await d?.stop();
  web?.closeAllConnections();
  await new Promise((r) => web?.close(r));
  pki?.cleanup();
});

describe('secrets never leak', () => {
  it('not in a response, the event stream, a log line at trace, the database file, a 400, or --print-config', async () => {
    const events = new AbortController();
    const stream = await fetch(`${d.url}/api/events`, { headers: { authorization: `Bearer ${d.adminKey}` }, signal: events.signal });
    let streamed = '';
    const pump = (async () => {
      const decoder = new TextDecoder();
      try {
        for await (const chunk of stream.body!) streamed += decoder.decode(chunk as Uint8Array);
      } catch {
        // aborted at the end
      }
    })();

    const group = await ok(read(admin, 'POST', '/admin/api/groups', { name: 'secret-public', visibility: 'PUBLIC' }));
    const common = { resourceType: 'HTTP', target: `${base}/`, skipTLS: true, groupIds: [group.id] };
    const basic = await ok(
      read(admin, 'POST', '/api/resources', {
        ...common,
        name: 'secret-basic',
        secretHeaders: { 'X-Secret': SECRET.header },
        auth: { type: 'basic', username: 'ops', password: SECRET.password },
        clientCert: client.cert,
        clientKey: client.key,
      }),
    );
    const bearer = await ok(
      read(admin, 'POST', '/api/resources', { ...common, name: 'secret-bearer', auth: { type: 'bearer', token: SECRET.token } }),
    );
    for (const r of [basic, bearer]) {
      expect(await ok(read(admin, 'POST', `/api/resources/${r.id}/check`))).toMatchObject({ status: 'AVAILABLE' });
      await ok(read(admin, 'GET', `/admin/api/resources/${r.id}`));
      await ok(read(anon, 'GET', `/api/resources/${r.id}`));
      await ok(read(admin, 'GET', `/api/resources/${r.id}/history`));
    }
    // apply sends them again; a PATCH answers with the resource.
    await ok(read(admin, 'PATCH', `/api/resources/${basic.id}`, { secretHeaders: { 'X-Secret': SECRET.header }, intervalSeconds: 30 }));
    await ok(read(admin, 'GET', '/admin/api/resources'));
    await ok(read(anon, 'GET', '/api/resources'));

    // Refusals name the field, never the value.
    for (const body of [
      { secretHeaders: { Host: SECRET.header } },
      { secretHeaders: { 'X-Secret': `${SECRET.header}\r\n` } },
      { auth: { type: 'bearer', token: `${SECRET.token}\n` } },
      { headers: { Authorization: 'x' }, auth: { type: 'basic', username: 'u', password: SECRET.password } },
      { clientCert: client.cert, clientKey: `${client.key.slice(0, 60)}${SECRET.token}` },
    ]) {
      const res = await read(admin, 'POST', '/api/resources', { ...common, name: 'refused', ...body });
      expect(res.status, res.text).toBe(400);
    }

    events.abort();
    await pump;
    expect(streamed).toContain('CHECK_COMPLETED');
    const config = await runMonctl(['daemon', '--print-config', '--data-dir', d.dataDir, '--log-level', 'trace']);
    const database = (await databaseBytes(d)).toString('latin1');
    const logs = `${d.logs.map((l) => JSON.stringify(l)).join('\n')}\n${d.stderr()}`;
    expect({
      responses: leaks(bodies.join('\n')),
      events: leaks(streamed),
      logs: leaks(logs),
      database: leaks(database),
      printConfig: leaks(config.stdout + config.stderr),
    }).toEqual({ responses: [], events: [], logs: [], database: [], printConfig: [] });
    // The secrets did reach the target: the checks sent them.
    // …the client certificate too (mTLS).
    expect(received).toContain(`${SECRET.header} Basic ${Buffer.from(`ops:${SECRET.password}`).toString('base64')} cert:client`);
    expect(received).toContain(` Bearer ${SECRET.token}`);
  });
});

describe('a database without its install secret', () => {
  it('the check says the secrets cannot be opened; a PATCH that needs them is a 409, one that removes them works', async () => {
    const r = await ok(
      call(d, admin, 'POST', '/api/resources', {
        name: 'sealed-elsewhere',
        resourceType: 'HTTP',
        target: `${base}/`,
        skipTLS: true,
        intervalSeconds: 3600,
        secretHeaders: { 'X-Secret': SECRET.header },
      }),
    );
    // Sealed under another key, as a copy opened by a daemon with another install secret sees it.
    await queryDb(d, 'UPDATE resources SET http_secrets = ? WHERE id = ?', `v1:${randomBytes(60).toString('base64')}`, r.id);
    const check = await call(d, admin, 'POST', `/api/resources/${r.id}/check`);
    expect(check.status, check.text).toBe(503);
    expect(check.json().detail).toMatch(/secrets cannot be opened with this daemon's install secret/);
    const merge = await call(d, admin, 'PATCH', `/api/resources/${r.id}`, { secretHeaders: { 'X-Other': 'v' } });
    expect(merge.status, merge.text).toBe(409);
    expect(merge.json().errors[0].field).toBe('secretHeaders');
    // Fields that need no secret still change.
    expect(await ok(call(d, admin, 'PATCH', `/api/resources/${r.id}`, { timeoutSeconds: 9, method: 'PUT' }))).toMatchObject({
      secrets: { headers: ['X-Secret'] },
    });
    const reset = await ok(call(d, admin, 'PATCH', `/api/resources/${r.id}`, { secretHeaders: null }));
    expect(reset).toMatchObject({ timeoutSeconds: 9, secrets: { headers: [] } });
    expect(await ok(call(d, admin, 'POST', `/api/resources/${r.id}/check`))).toMatchObject({ status: 'AVAILABLE' });
  });
});
