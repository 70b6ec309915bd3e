import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { importPKCS8, SignJWT } from 'jose';

export interface TokenServer {
  realm: string;
  service: string;
  issuer: string;
  certFile: string;
  /** Token requests answered so far, by scope. */
  requests: Array<{ scope: string; account: string | undefined }>;
  stop(): Promise<void>;
}

/**
 * A registry token server (the Docker token protocol) for distribution 2.8:
 * RS256 JWTs carrying the self-signed certificate in `x5c`, which the
 * registry trusts through `rootcertbundle`. `user`/`password` get every
 * action asked for; anonymous callers get pull on `public/*` only; pull-only scopes on
 * `limited/*` are answered 429 with RateLimit headers.
 */
export async function startTokenServer(dir: string, user: string, password: string): Promise<TokenServer> {
  const keyFile = join(dir, 'token.key');
  const certFile = join(dir, 'token.crt');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '2', '-subj', '/CN=monctl-test-token'],
    { stdio: 'ignore' },
  );
  const key = await importPKCS8(readFileSync(keyFile, 'utf8'), 'RS256');
  const der = readFileSync(certFile, 'utf8')
    .replace(/-----[^-]+-----/g, '')
    .replace(/\s+/g, '');
  const service = 'monctl-test-registry';
  const issuer = 'monctl-test-issuer';
  const requests: TokenServer['requests'] = [];
  const expected = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url!, 'http://x');
    const scopes = url.searchParams.getAll('scope');
    const auth = req.headers.authorization;
    if (auth && auth !== expected) {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"details":"bad credentials"}');
      return;
    }
    const authed = auth === expected;
    requests.push({ scope: scopes.join(' '), account: authed ? user : undefined });
    if (scopes.some((s) => s.includes(':limited/') && s.endsWith(':pull'))) {
      res.writeHead(429, { 'ratelimit-limit': '100;w=21600', 'ratelimit-remaining': '0;w=21600' }).end();
      return;
    }
    const access = scopes.map((scope) => {
      const [type, name, actions] = scope.split(':');
      const granted = authed ? actions.split(',') : name.startsWith('public/') ? ['pull'] : [];
      return { type, name, actions: granted };
    });
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({ access })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT', x5c: [der] })
      .setIssuer(issuer)
      .setAudience(service)
      .setSubject(authed ? user : '')
      .setIssuedAt(now - 5)
      .setNotBefore(now - 5)
      .setExpirationTime(now + 300)
      .setJti(String(Math.random()))
      .sign(key);
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ token, expires_in: 300, issued_at: new Date((now - 5) * 1000).toISOString() }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    realm: `http://127.0.0.1:${port}/token`,
    service,
    issuer,
    certFile,
    requests,
    stop: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
