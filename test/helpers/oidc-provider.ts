import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import Provider, { type Configuration } from 'oidc-provider';

/** A test user of the provider: the login name typed on its (development) login form is `login`. */
export interface OidcTestUser {
  login: string;
  email: string;
  emailVerified?: boolean;
  name?: string;
  groups?: string[];
}

export interface OidcTestClient {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
}

export interface TestOidcProvider {
  /** `http://127.0.0.1:<port>`: the issuer, discovery at `/.well-known/openid-configuration`. */
  issuer: string;
  client: OidcTestClient;
  provider: Provider;
  /** Adds a redirect URI to the client (a route's hostname, say), at once. */
  allowRedirect(uri: string): void;
  /**
   * Rewrites the ID token of the token endpoint's next answers while set (the attacks):
   * `claims` changes the payload, `key: 'foreign'` signs with a key the provider never published.
   */
  tamper(fn: ((claims: Record<string, unknown>) => { claims: Record<string, unknown>; key?: 'own' | 'foreign' }) | undefined): void;
  stop(): Promise<void>;
}

export const DEFAULT_USERS: OidcTestUser[] = [
  { login: 'alice', email: 'alice@example.com', name: 'Alice Admin', groups: ['monctl-admins', 'ops'] },
  { login: 'bob', email: 'bob@example.com', name: 'Bob User', groups: ['ops'] },
  { login: 'eve', email: 'eve@elsewhere.test', name: 'Eve Outsider', groups: [] },
];

/**
 * A certified OpenID provider (the `oidc-provider` package) on 127.0.0.1 with
 * an OS-chosen port: discovery, the authorization code flow with PKCE, its
 * development login and consent pages (any password is accepted for a listed
 * login), the device authorization grant, and `email`/`groups` claims.
 */
export async function startOidcProvider(
  opts: {
    users?: OidcTestUser[];
    redirectUris?: string[];
    clientId?: string;
    clientSecret?: string;
    /** Whether the provider offers the device authorization grant (default true). */
    deviceFlow?: boolean;
  } = {},
): Promise<TestOidcProvider> {
  const users = new Map((opts.users ?? DEFAULT_USERS).map((u) => [u.login, u]));
  const deviceFlow = opts.deviceFlow ?? true;
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const own = await generateKeyPair('RS256', { extractable: true });
  const foreign = await generateKeyPair('RS256', { extractable: true });
  const ownJwk: JWK = { ...(await exportJWK(own.privateKey)), kid: 'test-own', alg: 'RS256', use: 'sig' };
  const client: OidcTestClient = {
    clientId: opts.clientId ?? 'monctl',
    clientSecret: opts.clientSecret ?? 'monctl-test-client-secret-0123456789',
    redirectUris: [...(opts.redirectUris ?? [])],
  };
  const configuration: Configuration = {
    clients: [
      {
        client_id: client.clientId,
        client_secret: client.clientSecret,
        redirect_uris: client.redirectUris.length ? client.redirectUris : ['http://127.0.0.1/unused'],
        grant_types: ['authorization_code', 'refresh_token', ...(deviceFlow ? ['urn:ietf:params:oauth:grant-type:device_code'] : [])],
        response_types: ['code'],
      },
    ],
    jwks: { keys: [ownJwk] },
    cookies: { keys: ['monctl-test-cookie-key'] },
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name', 'preferred_username'],
      groups: ['groups'],
    },
    scopes: ['openid', 'email', 'profile', 'groups', 'offline_access'],
    // Explicit lifetimes: the provider's notices about its defaults would fill the test output.
    ttl: { AccessToken: 600, AuthorizationCode: 60, DeviceCode: 600, Grant: 3600, IdToken: 600, Interaction: 600, Session: 3600 },
    features: { devInteractions: { enabled: true }, deviceFlow: { enabled: deviceFlow } },
    pkce: { required: () => true },
    async findAccount(_ctx, id) {
      const user = users.get(id);
      if (!user) return undefined;
      return {
        accountId: id,
        async claims() {
          return {
            sub: id,
            email: user.email,
            email_verified: user.emailVerified ?? true,
            name: user.name ?? id,
            preferred_username: id,
            groups: user.groups ?? [],
          };
        },
      };
    },
  };
  const provider = new Provider(issuer, configuration);
  let tamperWith: Parameters<TestOidcProvider['tamper']>[0];
  provider.use(async (ctx, next) => {
    await next();
    // Its development pages import a web font: nothing may leave loopback.
    if (typeof ctx.body === 'string' && ctx.body.includes('@import url(https:'))
      ctx.body = ctx.body.replace(/@import url\(https:[^)]*\);?/g, '');
    if (!tamperWith || ctx.path !== '/token' || ctx.status !== 200) return;
    const body = ctx.body as Record<string, unknown> | undefined;
    if (typeof body?.id_token !== 'string') return;
    const payload = JSON.parse(Buffer.from(body.id_token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
    const out = tamperWith(payload);
    const key = out.key === 'foreign' ? foreign.privateKey : own.privateKey;
    body.id_token = await new SignJWT(out.claims).setProtectedHeader({ alg: 'RS256', kid: 'test-own' }).sign(key);
  });
  // Static clients are fixed at start, before the daemon's OS-chosen ports are known: the
  // allowed redirect URIs are this live list instead (exact matches, as the provider's own check).
  provider.Client.prototype.redirectUriAllowed = (value: string) => client.redirectUris.includes(value);
  const callback = provider.callback();
  server.on('request', callback);
  return {
    issuer,
    client,
    provider,
    allowRedirect(uri) {
      if (!client.redirectUris.includes(uri)) client.redirectUris.push(uri);
    },
    tamper(fn) {
      tamperWith = fn;
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const formOf = (html: string) => {
  const form = /<form[^>]*action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/i.exec(html);
  if (!form) return undefined;
  const fields = new URLSearchParams();
  for (const input of form[2]!.matchAll(/<input[^>]*>/gi)) {
    const name = /name="([^"]*)"/.exec(input[0])?.[1];
    if (name) fields.set(name, /value="([^"]*)"/.exec(input[0])?.[1] ?? '');
  }
  return { action: form[1]!.replace(/&amp;/g, '&'), fields };
};

/**
 * Goes through the provider's login and consent pages without a browser, as
 * user `login`, starting at `url` (an authorization URL, or the device
 * flow's verification_uri_complete). Resolves with the first redirect that
 * leaves the provider (the client's callback with its `code` and `state`),
 * or `'done'` when the provider ends on its own page (the device flow).
 * `abort`: refuse at the device flow's confirmation page instead (resolves `'done'` too).
 */
export async function signInAtProvider(url: string, login: string, opts: { abort?: boolean } = {}): Promise<string> {
  const origin = new URL(url).origin;
  const jar = new Map<string, string>();
  const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  let next: { url: string; method: 'GET' | 'POST'; body?: URLSearchParams } = { url, method: 'GET' };
  let aborted = false;
  for (let step = 0; step < 20; step++) {
    const res = await fetch(next.url, {
      method: next.method,
      redirect: 'manual',
      headers: { cookie: cookie(), ...(next.body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      body: next.body?.toString(),
    });
    for (const set of res.headers.getSetCookie()) {
      const [pair] = set.split(';');
      const eq = pair!.indexOf('=');
      jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
    const location = res.headers.get('location');
    if (location) {
      const target = new URL(location, next.url);
      if (target.origin !== origin) return target.href;
      next = { url: target.href, method: 'GET' };
      continue;
    }
    const html = await res.text();
    if (res.status >= 400) throw new Error(`provider answered ${res.status} at ${next.url}: ${html.slice(0, 300)}`);
    const form = formOf(html);
    // After an abort the provider shows its code input page again: the refusal is done.
    if (!form || aborted) return 'done';
    if (opts.abort && form.fields.has('confirm')) {
      form.fields.set('abort', 'yes');
      aborted = true;
    }
    if (form.fields.has('login')) {
      form.fields.set('login', login);
      form.fields.set('password', 'any password');
    }
    next = { url: new URL(form.action, next.url).href, method: 'POST', body: form.fields };
  }
  throw new Error(`no end of the provider's pages after 20 steps from ${url}`);
}
