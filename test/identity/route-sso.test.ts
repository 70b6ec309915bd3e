import { X509Certificate } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect as h2connect } from 'node:http2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket as WsClient, WebSocketServer } from 'ws';
import { operations } from '../../src/api/operations.ts';
import { HttpError } from '../../src/errors.ts';
import { adminRunner, tempHome } from '../cli/run.ts';
import { startOidcProvider, type TestOidcProvider } from '../helpers/oidc-provider.ts';
import { makePki, type TestPki } from '../helpers/tls.ts';
import { edge, startTunnel, type Tunnel, until } from '../tunnel/helpers.ts';
import { h2Request, tlsEdge } from '../tunnel/tls-edge.ts';
import { echoTarget, HTML, setCookies, signIn, ssoArgs, ssoEnv } from './route-sso-world.ts';

/**
 * Sign-in in front of HTTP routes (`auth: oidc`) against a real OpenID provider: the redirect,
 * the callback on the route's own hostname, the sealed host-only cookie, the identity headers the
 * target gets, WebSocket upgrades and HTTP/2 checked like the rest, logout, and the attacks.
 */
describe('identity: sign-in in front of routes', () => {
  let provider: TestOidcProvider;
  let tunnel: Tunnel;
  let target: Awaited<ReturnType<typeof echoTarget>>;
  let wss: WebSocketServer;
  let pki: TestPki;
  let port: string;
  let tlsPort: string;
  const ids: Record<string, number> = {};
  /** The Host header of a test hostname: with the edge's port, as a browser sends it. */
  const at = (name: string) => `${name}:${port}`;
  const get = (host: string, path: string, headers: Record<string, string> = {}) =>
    edge(tunnel.daemon.edgeUrl, at(host), 'GET', path, undefined, headers);

  beforeAll(async () => {
    provider = await startOidcProvider();
    pki = makePki('route sso CA');
    target = await echoTarget();
    wss = new WebSocketServer({ server: target.server, path: '/app/ws' });
    wss.on('connection', (socket, req) => socket.send(JSON.stringify(req.headers)));
    tunnel = await startTunnel([], [...ssoArgs(provider.issuer), '--edge-tls-listen', '127.0.0.1:0'], ssoEnv(provider.client.clientSecret));
    port = new URL(tunnel.daemon.edgeUrl).port;
    tlsPort = new URL(tunnel.daemon.edgeTlsUrl!).port;
    const admin = tunnel.daemon.admin;
    // app.test: pathPrefix /app (the callback is served at the host's root all the same); other.test: same rules.
    for (const [name, prefix] of [
      ['app', '/app'],
      ['other', '/'],
    ] as const) {
      ids[name] = await tunnel.httpRoute(name, target.url, `${name}.test`, prefix);
      await admin.call(operations.updateRoute, { params: { id: ids[name]! }, body: { auth: 'oidc', sso: { domains: ['example.com'] } } });
      provider.allowRedirect(`http://${at(`${name}.test`)}/.monctl/sso/callback`);
    }
    provider.allowRedirect(`https://app.test:${tlsPort}/.monctl/sso/callback`);
    const pair = pki.issueNames('app', 31, ['app.test']);
    await admin.call(operations.uploadCertificate, { body: { certificate: pair.cert + pki.ca, privateKey: pair.key } });
    expect(new X509Certificate(pair.cert).subjectAltName).toContain('app.test');
  });
  afterAll(async () => {
    await tunnel?.close();
    wss?.close();
    await target?.close();
    await provider?.stop();
    pki?.cleanup();
  });

  it('the API: auth oidc needs a rule, rules are normalised, TCP routes refuse them, the detail shows them', async () => {
    const admin = tunnel.daemon.admin;
    const refused = await admin
      .call(operations.createRoute, {
        body: { name: 'norules', type: 'HTTP', agentId: tunnel.agentId, target: target.url, hostname: 'norules.test', auth: 'oidc' },
      })
      .catch((e: HttpError) => e);
    expect(refused).toBeInstanceOf(HttpError);
    expect((refused as HttpError).errors?.[0]?.field).toBe('sso');
    const created = await admin.call(operations.createRoute, {
      body: {
        name: 'rules',
        type: 'HTTP',
        agentId: tunnel.agentId,
        target: target.url,
        hostname: 'rules.test',
        auth: 'oidc',
        sso: { emails: [' Ann@Bücher.Example '], domains: ['@Example.COM', 'example.com'], groups: ['ops'], sessionTtl: 3600 },
      },
    });
    expect(created.sso).toEqual({ emails: ['ann@xn--bcher-kva.example'], domains: ['example.com'], groups: ['ops'], sessionTtl: 3600 });
    const detail = await admin.call(operations.getRoute, { params: { id: created.id } });
    expect(detail.sso).toEqual(created.sso);
    const bad = await admin
      .call(operations.updateRoute, { params: { id: created.id }, body: { sso: { domains: ['not a domain'] } } })
      .catch((e: HttpError) => e);
    expect((bad as HttpError).errors?.[0]?.field).toBe('sso.domains[0]');
    const tcp = await admin
      .call(operations.createRoute, {
        body: { name: 'tcp-sso', type: 'TCP', agentId: tunnel.agentId, target: '127.0.0.1:1', listenPort: 1, sso: { groups: ['ops'] } },
      })
      .catch((e: HttpError) => e);
    expect((tcp as HttpError).errors?.[0]?.field).toBe('sso');
    const match = await admin.call(operations.matchRoute, { query: { host: 'app.test', path: '/app/x' } });
    expect(match.reasons.join('\n')).toContain('sign-in through the OpenID provider is required');
    const other = await admin.call(operations.updateRoute, { params: { id: created.id }, body: { auth: 'none' } });
    expect(other.sso).toBeNull();
    await admin.call(operations.deleteRoute, { params: { id: created.id } });
  });

  it('the CLI: routes add|update --auth oidc with --sso-* flags, the view shows the rules; apply -f round trip', async () => {
    const home = tempHome();
    try {
      const monctl = adminRunner(tunnel.daemon, home.dir);
      const base = ['--type', 'HTTP', '--agent', 'edge-agent', '--target', target.url, '--hostname', 'cli.test'];
      const added = await monctl([
        'routes',
        'add',
        'cli-sso',
        ...base,
        '--auth',
        'oidc',
        '--sso-domain',
        '@Example.com',
        '--sso-group',
        'ops',
        '--sso-session',
        '2h',
        '-o',
        'json',
      ]);
      expect(added.code, added.stderr).toBe(0);
      expect(added.json().sso).toEqual({ emails: [], domains: ['example.com'], groups: ['ops'], sessionTtl: 7200 });
      const updated = await monctl([
        'routes',
        'update',
        'cli-sso',
        '--sso-email',
        'Bob@Example.com',
        '--sso-session',
        'default',
        '-o',
        'json',
      ]);
      expect(updated.code, updated.stderr).toBe(0);
      expect(updated.json().sso).toEqual({ emails: ['bob@example.com'], domains: ['example.com'], groups: ['ops'], sessionTtl: null });
      const view = await monctl(['routes', 'get', 'cli-sso']);
      expect(view.stdout).toContain('emails bob@example.com; domains example.com; groups ops; session default');
      const bad = await monctl(['routes', 'update', 'cli-sso', '--sso-session', 'soon']);
      expect(bad.code).toBe(2);
      const yaml = (rules: string) =>
        `agents:\n  - name: edge-agent\nroutes:\n  - name: cli-sso\n    agents: [edge-agent]\n    target: ${target.url}\n    hostname: cli.test\n    auth: oidc\n    sso:\n${rules}`;
      const path = join(home.dir, 'routes.yaml');
      writeFileSync(path, yaml('      emails: [bob@example.com]\n      domains: ["@EXAMPLE.com"]\n      groups: [ops]\n'));
      const same = await monctl(['apply', '-f', path, '--dry-run']);
      expect(same.code, same.stderr).toBe(0);
      expect(same.stdout).not.toMatch(/update route cli-sso/);
      writeFileSync(path, yaml('      domains: ["*"]\n      sessionTtl: 1h\n'));
      const applied = await monctl(['apply', '-f', path]);
      expect(applied.code, applied.stderr).toBe(0);
      expect(applied.stdout).toMatch(/update route cli-sso/);
      const after = (await monctl(['routes', 'get', 'cli-sso', '-o', 'json'])).json();
      expect(after.sso).toEqual({ emails: [], domains: ['*'], groups: [], sessionTtl: 3600 });
      expect((await monctl(['apply', '-f', path, '--dry-run'])).stdout).not.toMatch(/update route cli-sso/);
      await monctl(['routes', 'delete', 'cli-sso', '--yes']);
    } finally {
      home.cleanup();
    }
  });

  it('sends a browser without a session to the provider, with PKCE, state and nonce, and a sign-in cookie for the callback only', async () => {
    const before = target.hits();
    const res = await get('app.test', '/app/page?x=1', HTML);
    expect(res.status).toBe(302);
    const location = new URL(String(res.headers.location));
    expect(location.origin).toBe(provider.issuer);
    expect(location.searchParams.get('redirect_uri')).toBe(`http://${at('app.test')}/.monctl/sso/callback`);
    expect(location.searchParams.get('code_challenge_method')).toBe('S256');
    expect(location.searchParams.get('state')).toBeTruthy();
    expect(location.searchParams.get('nonce')).toBeTruthy();
    const [tx] = setCookies(res.headers);
    expect(tx!.attributes).toEqual(expect.arrayContaining(['path=/.monctl/sso/callback', 'httponly', 'samesite=lax']));
    // Not a browser (an API client): a 401 problem, no redirect.
    const api = await get('app.test', '/app/page', { accept: 'application/json' });
    expect(api.status).toBe(401);
    expect(api.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(target.hits()).toBe(before);
  });

  it('signs in through the provider: the callback sets a host-only, HttpOnly, SameSite=Lax cookie and returns to the page', async () => {
    const { callback, cookie } = await signIn(tunnel.daemon.edgeUrl, at('app.test'), '/app/page?x=1', 'alice');
    expect(callback.status, callback.text).toBe(302);
    expect(callback.headers.location).toBe('/app/page?x=1');
    const session = setCookies(callback.headers).find((c) => c.name === 'monctl_route_sso')!;
    expect(session.attributes).toEqual(expect.arrayContaining(['path=/', 'httponly', 'samesite=lax']));
    expect(session.attributes.some((a) => a.startsWith('domain='))).toBe(false);
    expect(session.attributes).not.toContain('secure');
    expect(session.value.length).toBeLessThan(4096);
    // The sign-in cookie is cleared.
    expect(setCookies(callback.headers).find((c) => c.name.startsWith('monctl_sso_'))?.attributes).toContain('max-age=0');
    const page = await get('app.test', '/app/page?x=1', { cookie: `${cookie}; theirs=1` });
    expect(page.status).toBe(200);
    const seen = JSON.parse(page.text) as { headers: Record<string, string> };
    expect(seen.headers['x-auth-request-email']).toBe('alice@example.com');
    expect(seen.headers['x-auth-request-user']).toBe('alice');
    expect(seen.headers['x-auth-request-preferred-username']).toBe('alice@example.com');
    expect(seen.headers['x-auth-request-groups']).toBe('monctl-admins,ops');
    // The edge's own cookie never reaches the target; the target's own cookies do.
    expect(seen.headers.cookie).toBe('theirs=1');
  });

  it('attack: identity headers forged by the client are removed (with and without a session)', async () => {
    const { cookie } = await signIn(tunnel.daemon.edgeUrl, at('app.test'), '/app/forged', 'bob');
    const forged = {
      'x-auth-request-email': 'alice@example.com',
      'x-auth-request-groups': 'monctl-admins',
      'x-auth-request-access-token': 'stolen',
    };
    const page = await get('app.test', '/app/forged', { cookie, ...forged });
    const seen = JSON.parse(page.text) as { headers: Record<string, string> };
    expect(seen.headers['x-auth-request-email']).toBe('bob@example.com');
    expect(seen.headers['x-auth-request-groups']).toBe('ops');
    expect(seen.headers['x-auth-request-access-token']).toBeUndefined();
    const before = target.hits();
    expect((await get('app.test', '/app/forged', forged)).status).toBe(401);
    expect(target.hits()).toBe(before);
  });

  it('attack: no open redirect through the return path: //host comes back as a path of the route host', async () => {
    const { callback } = await signIn(tunnel.daemon.edgeUrl, at('other.test'), '//evil.example/x?y=1', 'alice');
    expect(callback.status).toBe(302);
    expect(callback.headers.location).toBe('/evil.example/x?y=1');
  });

  it("attack: a cookie from one route's host is refused on another route's host", async () => {
    const { cookie } = await signIn(tunnel.daemon.edgeUrl, at('app.test'), '/app/', 'alice');
    expect((await get('app.test', '/app/', { cookie })).status).toBe(200);
    const before = target.hits();
    const replayed = await get('other.test', '/', { cookie });
    expect(replayed.status).toBe(401);
    expect(target.hits()).toBe(before);
  });

  it('a wildcard route: each name signs in on its own, and a session of one name is refused on its sibling', async () => {
    const id = await tunnel.httpRoute('wild', target.url, '*.wild.test');
    await tunnel.daemon.admin.call(operations.updateRoute, { params: { id }, body: { auth: 'oidc', sso: { groups: ['ops'] } } });
    for (const name of ['a.wild.test', 'b.wild.test']) provider.allowRedirect(`http://${at(name)}/.monctl/sso/callback`);
    await until(async () => (await get('a.wild.test', '/', HTML)).status === 302);
    const { cookie } = await signIn(tunnel.daemon.edgeUrl, at('a.wild.test'), '/', 'bob');
    expect((await get('a.wild.test', '/', { cookie })).status).toBe(200);
    expect((await get('b.wild.test', '/', { cookie })).status).toBe(401);
    await tunnel.daemon.admin.call(operations.deleteRoute, { params: { id } });
  });

  it('attack: an email outside the allowed domain gets 403 sso-forbidden at the callback, and no session', async () => {
    const { callback, cookie } = await signIn(tunnel.daemon.edgeUrl, at('other.test'), '/', 'eve');
    expect(callback.status).toBe(403);
    expect(JSON.parse(callback.text)).toMatchObject({ type: 'urn:monctl:problem:sso-forbidden' });
    expect(JSON.parse(callback.text).detail).toContain('elsewhere.test');
    expect(cookie).toBe('');
  });

  it('attack: a wrong state at the route callback is refused with 400, and no session', async () => {
    const redirect = await get('other.test', '/', HTML);
    const [tx] = setCookies(redirect.headers);
    const back = new URL(await (await import('../helpers/oidc-provider.ts')).signInAtProvider(String(redirect.headers.location), 'alice'));
    back.searchParams.set('state', `${back.searchParams.get('state')!.slice(0, 16)}tampered`);
    const res = await get('other.test', back.pathname + back.search, { cookie: `${tx!.name}=${tx!.value}` });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text).type).toMatch(/sso-(state|transaction)/);
    expect(setCookies(res.headers).some((c) => c.name === 'monctl_route_sso')).toBe(false);
  });

  it('attack: a replayed code, a mismatched nonce, an ID token signed by another key or expired are refused at the route callback', async () => {
    const first = await signIn(tunnel.daemon.edgeUrl, at('other.test'), '/', 'alice');
    expect(first.callback.status).toBe(302);
    const replayed = await get('other.test', first.callbackPath, { cookie: first.txCookie });
    expect(replayed.status).toBe(400);
    expect(JSON.parse(replayed.text).type).toBe('urn:monctl:problem:sso-code');
    try {
      provider.tamper((claims) => ({ claims: { ...claims, nonce: 'not-the-nonce' } }));
      const nonce = await signIn(tunnel.daemon.edgeUrl, at('other.test'), '/', 'alice');
      expect(nonce.callback.status).toBe(400);
      expect(JSON.parse(nonce.callback.text).type).toBe('urn:monctl:problem:sso-id-token');
      provider.tamper((claims) => ({ claims, key: 'foreign' }));
      const foreign = await signIn(tunnel.daemon.edgeUrl, at('other.test'), '/', 'alice');
      expect(foreign.callback.status).toBe(400);
      expect(JSON.parse(foreign.callback.text).type).toBe('urn:monctl:problem:sso-id-token');
      expect(foreign.cookie).toBe('');
      const past = Math.floor(Date.now() / 1000) - 3600;
      provider.tamper((claims) => ({ claims: { ...claims, iat: past - 600, exp: past } }));
      const expired = await signIn(tunnel.daemon.edgeUrl, at('other.test'), '/', 'alice');
      expect(expired.callback.status).toBe(400);
      expect(JSON.parse(expired.callback.text).type).toBe('urn:monctl:problem:sso-id-token');
    } finally {
      provider.tamper(undefined);
    }
  });

  it('attack: a tampered session cookie is refused', async () => {
    const { cookie } = await signIn(tunnel.daemon.edgeUrl, at('other.test'), '/', 'alice');
    const [name, value] = [cookie.slice(0, cookie.indexOf('=')), cookie.slice(cookie.indexOf('=') + 1)];
    const raw = Buffer.from(value.slice(3), 'base64');
    raw[raw.length - 1]! ^= 1;
    const tampered = `${name}=v1:${raw.toString('base64')}`;
    expect((await get('other.test', '/', { cookie })).status).toBe(200);
    expect((await get('other.test', '/', { cookie: tampered })).status).toBe(401);
  });

  it("checks the route's current rules on every request, and logout clears the session", async () => {
    const { cookie } = await signIn(tunnel.daemon.edgeUrl, at('other.test'), '/', 'bob');
    expect((await get('other.test', '/', { cookie })).status).toBe(200);
    const admin = tunnel.daemon.admin;
    await admin.call(operations.updateRoute, { params: { id: ids.other! }, body: { sso: { domains: [], groups: ['monctl-admins'] } } });
    const refused = await until(async () => {
      const res = await get('other.test', '/', { cookie });
      return res.status === 403 && res;
    });
    expect(JSON.parse(refused.text).type).toBe('urn:monctl:problem:sso-forbidden');
    await admin.call(operations.updateRoute, { params: { id: ids.other! }, body: { sso: { domains: ['example.com'], groups: [] } } });
    const out = await get('other.test', '/.monctl/sso/logout', { cookie });
    expect(out.status).toBe(200);
    expect(out.text).toContain('Signed out');
    const cleared = setCookies(out.headers).find((c) => c.name === 'monctl_route_sso')!;
    expect(cleared.value).toBe('');
    expect(cleared.attributes).toContain('max-age=0');
  });

  it('checks WebSocket upgrades: refused without a session, admitted with one (identity headers included)', async () => {
    const url = `ws://127.0.0.1:${port}/app/ws`;
    const without = new WsClient(url, { headers: { host: at('app.test') } });
    const status = await new Promise<number>((resolve) => without.once('unexpected-response', (_req, res) => resolve(res.statusCode!)));
    expect(status).toBe(401);
    const { cookie } = await signIn(tunnel.daemon.edgeUrl, at('app.test'), '/app/', 'alice');
    const client = new WsClient(url, { headers: { host: at('app.test'), cookie, 'x-auth-request-email': 'forged@example.com' } });
    const first = await new Promise<string>((resolve, reject) => {
      client.once('message', (data) => resolve(String(data)));
      client.once('error', reject);
    });
    client.close();
    const headers = JSON.parse(first) as Record<string, string>;
    expect(headers['x-auth-request-email']).toBe('alice@example.com');
    expect(headers.cookie).toBeUndefined();
  });

  it('counts the redirects to sign in and the refusals in the refusal metrics, with the access log', async () => {
    const metrics = (await tunnel.daemon.admin.raw('GET', '/actuator/prometheus')).text;
    const count = (id: number, reason: string) =>
      Number(
        metrics
          .split('\n')
          .find((l) => l.startsWith(`monctl_tunnel_access_refused_total{route="${id}",reason="${reason}"}`))
          ?.split(' ')[1] ?? 0,
      );
    expect(count(ids.app!, 'sign_in_required')).toBeGreaterThan(0);
    expect(count(ids.app!, 'unauthorized')).toBeGreaterThan(0);
    expect(count(ids.other!, 'sso_forbidden')).toBeGreaterThan(0);
    const log = await tunnel.daemon.admin.call(operations.getRouteLog, { params: { id: ids.app! }, query: { limit: 200 } });
    expect(log.some((e) => e.status === 302 && e.error === 'access: sign-in required: redirected to the provider')).toBe(true);
  });

  it('on the HTTPS edge: a __Host- cookie with Secure, and HTTP/2 requests checked like the others', async () => {
    const host = `app.test:${tlsPort}`;
    const redirect = await tlsEdge(tunnel.daemon.edgeTlsUrl!, 'app.test', '/app/h2', pki.ca, { ...HTML, host });
    expect(redirect.status).toBe(302);
    const tx = setCookies(redirect.headers)[0]!;
    expect(tx.attributes).toContain('secure');
    const { signInAtProvider } = await import('../helpers/oidc-provider.ts');
    const back = new URL(await signInAtProvider(String(redirect.headers.location), 'alice'));
    expect(back.origin).toBe(`https://${host}`);
    const callback = await tlsEdge(tunnel.daemon.edgeTlsUrl!, 'app.test', back.pathname + back.search, pki.ca, {
      host,
      cookie: `${tx.name}=${tx.value}`,
    });
    expect(callback.status, callback.text).toBe(302);
    const session = setCookies(callback.headers).find((c) => c.name === '__Host-monctl_route_sso')!;
    expect(session.attributes).toEqual(expect.arrayContaining(['path=/', 'httponly', 'samesite=lax', 'secure']));
    const h2 = h2connect(tunnel.daemon.edgeTlsUrl!, { ca: pki.ca, servername: 'app.test' });
    try {
      const ask = (headers: Record<string, string>) => h2Request(h2, '/app/h2', host, headers);
      expect((await ask({})).status).toBe(401);
      // A plain-HTTP cookie is not the HTTPS edge's.
      const plain = await signIn(tunnel.daemon.edgeUrl, at('app.test'), '/app/', 'alice');
      expect((await ask({ cookie: plain.cookie })).status).toBe(401);
      const ok = await ask({ cookie: `${session.name}=${session.value}`, 'x-auth-request-user': 'mallory' });
      expect(ok.status).toBe(200);
      const seen = JSON.parse(ok.body) as { headers: Record<string, string> };
      expect(seen.headers['x-auth-request-user']).toBe('alice');
      expect(seen.headers['x-auth-request-email']).toBe('alice@example.com');
    } finally {
      h2.close();
    }
  });
});
