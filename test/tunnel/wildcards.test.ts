import { X509Certificate } from 'node:crypto';
import { connect as h2connect } from 'node:http2';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { expectProblem } from '../helpers/http.ts';
import { makePki, type TestPki } from '../helpers/tls.ts';
import { api } from '../tunnel-admin/helpers.ts';
import { edge, startTarget, startTunnel, type Tunnel } from './helpers.ts';

/**
 * Wildcard route hostnames (docs/API.md#wildcard-hostnames) on one daemon: precedence at the edge
 * (exact, then the longest wildcard, then the prefix within that hostname), the 409s, the reasons
 * of `routes test`, and HTTPS over HTTP/2 for two names under an uploaded wildcard certificate. The
 * target answers with the path it got, and each route's target URL has its own base path: the body
 * names the route. Hostnames resolve nowhere: Host and SNI are set by hand.
 */
describe('tunnel: wildcard hostnames', () => {
  let tunnel: Tunnel;
  let target: Awaited<ReturnType<typeof startTarget>>;
  let pki: TestPki;
  let directory: Awaited<ReturnType<typeof startTarget>>;
  const ids: Record<string, number> = {};

  /** A route named `name` whose target's base path is `/name`. */
  const route = async (name: string, hostname: string, extra: Record<string, unknown> = {}) => {
    const body = { name, type: 'HTTP', agentId: tunnel.agentId, target: `${target.url}/${name}`, hostname, ...extra };
    const created = await tunnel.daemon.admin.call(operations.createRoute, { body: body as never });
    ids[name] = created.id;
  };
  /** The route that served `host` and `path` (its name), or the status. */
  const served = async (host: string, path = '/') => {
    const res = await edge(tunnel.daemon.edgeUrl, host, 'GET', path);
    return res.status === 200 ? res.text.split('/')[1] : res.status;
  };
  const test = (host: string, path = '/', clientIp?: string) =>
    tunnel.daemon.admin.call(operations.matchRoute, { query: { host, path, ...(clientIp ? { clientIp } : {}) } });

  beforeAll(async () => {
    pki = makePki('wildcard test CA');
    target = await startTarget((req, res) => res.end(req.url));
    // ACME is on, its directory a 404 (an order fails at once, not after acme-client's retries):
    // a wildcard route's certificate state says DNS-01 is missing.
    directory = await startTarget((_req, res) => res.writeHead(404).end());
    const acme = ['--acme-directory', `${directory.url}/directory`];
    tunnel = await startTunnel([], ['--edge-tls-listen', '127.0.0.1:0', ...acme]);
    await route('exact', 'x.apps.test');
    await route('apps', '*.apps.test');
    await route('apps-api', '*.apps.test', { pathPrefix: '/api' });
    await route('deep', '*.deep.apps.test');
    await route('off', '*.off.apps.test', { enabled: false });
    await route('guarded', '*.guarded.test', { ipAllow: ['10.0.0.0/8'] });
    await tunnel.daemon.admin.call(operations.createStatusPage, {
      body: { slug: 'apps', title: 'Apps', customHostname: 'status.apps.test' },
    });
  });
  afterAll(async () => {
    await tunnel?.close();
    await target?.close();
    await directory?.close();
    pki?.cleanup();
  });

  it('serves the exact name first, then the longest wildcard, then the longest prefix of that hostname alone', async () => {
    const cases: Array<[string, string, string | number]> = [
      ['x.apps.test', '/', 'exact'],
      // The exact hostname wins whole: its prefixes are not mixed with the wildcard's.
      ['x.apps.test', '/api/v1', 'exact'],
      ['y.apps.test', '/', 'apps'],
      ['y.apps.test', '/api/v1', 'apps-api'],
      ['y.apps.test', '/apix', 'apps'],
      ['Y.APPS.test:8080', '/api', 'apps-api'],
      ['a.b.apps.test', '/', 'apps'],
      ['a.deep.apps.test', '/api', 'deep'],
      ['b.a.deep.apps.test', '/', 'deep'],
      // A wildcard never covers its bare name; the shorter one covers it.
      ['deep.apps.test', '/', 'apps'],
      ['apps.test', '/', 404],
      ['.apps.test', '/', 404],
      ['xapps.test', '/', 404],
      // A disabled wildcard is not considered: the shorter one serves.
      ['a.off.apps.test', '/', 'apps'],
      // A status page's custom hostname is an exact name: its other paths are not the wildcard's.
      ['status.apps.test', '/other', 404],
    ];
    for (const [host, path, expected] of cases) expect(await served(host, path), `${host}${path}`).toBe(expected);
    expect((await edge(tunnel.daemon.edgeUrl, 'status.apps.test', 'GET', '/')).text).toContain('Apps');
  });

  it('answers 409 naming the route for the same pattern and prefix in any letter case, and accepts overlaps', async () => {
    const post = (name: string, hostname: string, pathPrefix = '/') =>
      api(tunnel.daemon, 'POST', '/admin/api/routes', {
        name,
        type: 'HTTP',
        agentId: tunnel.agentId,
        target: target.url,
        hostname,
        pathPrefix,
      });
    for (const [hostname, prefix, owner] of [
      ['*.APPS.test', '/', 'apps'],
      ['*.apps.test', '/api', 'apps-api'],
      ['X.Apps.Test', '/', 'exact'],
      ['*.Off.apps.test', '/', 'off'],
    ]) {
      const problem = expectProblem(await post('clash', hostname, prefix), 409);
      expect(problem.errors, hostname).toEqual([
        { field: 'hostname', message: `Route ${owner} serves ${hostname.toLowerCase()}${prefix}` },
      ]);
    }
    // Not clashes: an exact name under a wildcard, a longer wildcard, another prefix (the most specific wins).
    for (const [name, hostname, prefix] of [
      ['z-exact', 'z.apps.test', '/'],
      ['z-wild', '*.z.apps.test', '/'],
      ['z-prefix', '*.apps.test', '/z'],
    ]) {
      const res = await post(name, hostname, prefix);
      expect(res.status, res.text).toBe(200);
      expect((await api(tunnel.daemon, 'DELETE', `/admin/api/routes/${res.json().id}`)).status).toBe(200);
    }
  });

  it('says which route a request would take and why (routes test)', async () => {
    expect(await test('x.apps.test', '/api/v1?q=1')).toMatchObject({
      routeName: 'exact',
      agentId: tunnel.agentId,
      agentName: 'edge-agent',
      forwardPath: '/api/v1?q=1',
      reasons: expect.arrayContaining(['exact hostname x.apps.test (over *.apps.test)']),
    });
    const viaWildcard = await test('a.deep.apps.test', '/');
    expect(viaWildcard).toMatchObject({ routeId: ids.deep, routeName: 'deep' });
    expect(viaWildcard.reasons).toContain('wildcard *.deep.apps.test: the longest covering a.deep.apps.test (over *.apps.test)');
    expect((await test('y.apps.test', '/api/x')).reasons).toContain(
      'path prefix /api: the longest under *.apps.test covering /api/x (over /)',
    );
    const disabled = await test('a.off.apps.test');
    expect(disabled.routeName).toBe('apps');
    expect(disabled.reasons).toContain('route off (*.off.apps.test/) is disabled: not considered');
    expect(await test('apps.test')).toMatchObject({
      routeId: null,
      reasons: ['no route for host apps.test: no exact hostname and no wildcard covers it (404)'],
    });
    expect((await test('status.apps.test', '/x')).reasons).toContain(
      "status.apps.test is a status page's custom hostname: wildcards do not serve it (404)",
    );
    expect((await test('y.apps.test', '/a/../../x')).reasons[0]).toMatch(/^the edge refuses the path: .*\(400\)$/);
    expect((await test('y.apps.test', '/a%2Fb')).reasons).toContain(
      'the path holds an encoded slash (%2F or %5C) and the route does not allow them (400)',
    );
    // Access control: the address rules are judged for the given client.
    const refused = await test('a.guarded.test', '/', '192.0.2.1');
    expect(refused).toMatchObject({ routeName: 'guarded', agentId: null });
    expect(refused.reasons).toContain('access: client 192.0.2.1 is not in ipAllow (403): no agent is chosen');
    expect(await test('a.guarded.test', '/', '10.1.2.3')).toMatchObject({ routeName: 'guarded', agentId: tunnel.agentId });
    expect((await test('a.guarded.test')).reasons).toContain('the route has ipAllow/ipDeny rules: give a clientIp to test them');
  });

  it('serves x.apps.test and y.apps.test over HTTP/2 with an uploaded wildcard certificate', async () => {
    const detail = () => tunnel.daemon.admin.call(operations.getRoute, { params: { id: ids.apps } });
    // No certificate yet, and ACME cannot prove a wildcard without DNS-01.
    expect((await detail()).certificate).toMatchObject({
      state: 'FAILED',
      source: 'ACME',
      lastError: expect.stringContaining('--acme-dns-rfc2136'),
    });
    const pair = pki.issueNames('apps', 31, ['*.apps.test']);
    const cert = await tunnel.daemon.admin.call(operations.uploadCertificate, {
      body: { certificate: pair.cert + pki.ca, privateKey: pair.key },
    });
    expect((await detail()).certificate).toMatchObject({ state: 'VALID', certificateId: cert.id, source: 'UPLOAD' });
    const serial = new X509Certificate(pair.cert).serialNumber;
    for (const [name, expected] of [
      ['x.apps.test', 'exact'],
      ['y.apps.test', 'apps'],
    ]) {
      const session = h2connect(tunnel.daemon.edgeTlsUrl!, { ca: pki.ca, servername: name });
      try {
        await new Promise((resolve, reject) => session.once('connect', resolve).once('error', reject));
        const socket = session.socket as TLSSocket;
        expect(socket.alpnProtocol).toBe('h2');
        expect(socket.getPeerCertificate().serialNumber).toBe(serial);
        const body = await new Promise<string>((resolve, reject) => {
          const stream = session.request({ ':path': '/hello', ':authority': name });
          let text = '';
          stream.setEncoding('utf8');
          stream.on('data', (c: string) => (text += c));
          stream.on('end', () => resolve(text));
          stream.on('error', reject);
          stream.end();
        });
        expect(body, name).toBe(`/${expected}/hello`);
      } finally {
        session.close();
      }
    }
  });
});
