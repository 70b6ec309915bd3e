import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SecureContext } from 'node:tls';
import type { DaemonContext } from '../../context.ts';
import { profiledContext } from '../../http/tls-profile.ts';
import { certBox } from '../box.ts';

/** A challenge stays answerable this long at most (an order that dies leaves no answer behind for long). */
const TTL_MS = 15 * 60_000;
const HTTP01_PREFIX = '/.well-known/acme-challenge/';

interface Http01 {
  keyAuthorization: string;
  expiresAt: number;
}
interface Alpn {
  context: SecureContext;
  expiresAt: number;
}

/**
 * The answers to ACME challenges in flight: HTTP-01 key authorizations (the
 * plain edge serves them at /.well-known/acme-challenge/TOKEN) and TLS-ALPN-01
 * certificates (the TLS edge serves them to a client offering acme-tls/1).
 * Kept in memory and in the database, so that whichever daemon of the pod the
 * validator reaches can answer the order of another.
 */
export class AcmeChallenges {
  readonly #ctx: DaemonContext;
  readonly #http01 = new Map<string, Http01>();
  readonly #alpn = new Map<string, Alpn>();

  constructor(ctx: DaemonContext) {
    this.#ctx = ctx;
  }

  async putHttp01(hostname: string, token: string, keyAuthorization: string): Promise<void> {
    const expiresAt = Date.now() + TTL_MS;
    this.#http01.set(token, { keyAuthorization, expiresAt });
    await this.#ctx.db
      .insertInto('acme_challenges')
      .values({
        token,
        hostname,
        type: 'http-01',
        key_authorization: keyAuthorization,
        cert_pem: null,
        key_enc: null,
        expires_at: expiresAt,
      })
      .onConflict((oc) => oc.column('token').doUpdateSet({ key_authorization: keyAuthorization, expires_at: expiresAt }))
      .execute();
  }

  async putAlpn(hostname: string, keyAuthorization: string, certPem: string, keyPem: string): Promise<void> {
    const expiresAt = Date.now() + TTL_MS;
    this.#alpn.set(hostname, { context: profiledContext(this.#ctx.config.tlsProfile, { cert: certPem, key: keyPem }), expiresAt });
    const row = { key_authorization: keyAuthorization, cert_pem: certPem, key_enc: certBox(this.#ctx).seal(keyPem), expires_at: expiresAt };
    await this.#ctx.db
      .insertInto('acme_challenges')
      .values({ token: `alpn:${hostname}`, hostname, type: 'tls-alpn-01', ...row })
      .onConflict((oc) => oc.column('token').doUpdateSet(row))
      .execute();
  }

  async remove(type: string, hostname: string, token: string): Promise<void> {
    const key = type === 'tls-alpn-01' ? `alpn:${hostname}` : token;
    if (type === 'tls-alpn-01') this.#alpn.delete(hostname);
    else this.#http01.delete(token);
    await this.#ctx.db
      .deleteFrom('acme_challenges')
      .where((eb) => eb.or([eb('token', '=', key), eb('expires_at', '<', Date.now())]))
      .execute();
  }

  /**
   * The plain edge's answer to an HTTP-01 validation, before any route (and
   * before a route's httpsRedirect: validators follow no redirect to a
   * certificate that does not exist yet). Unknown tokens are 404.
   */
  http01(req: IncomingMessage, res: ServerResponse): boolean {
    const path = req.url ?? '';
    if (!path.startsWith(HTTP01_PREFIX) || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
    const token = path.slice(HTTP01_PREFIX.length).split('?')[0];
    void this.#keyAuthorization(token).then(
      (answer) => {
        if (answer === undefined) return void res.writeHead(404, { 'Content-Type': 'text/plain' }).end('no such challenge\n');
        res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': Buffer.byteLength(answer), 'Cache-Control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : answer);
      },
      (err: unknown) => {
        this.#ctx.log.warn({ err }, 'acme: reading an HTTP-01 challenge failed');
        res.writeHead(503).end();
      },
    );
    return true;
  }

  /** The TLS-ALPN-01 certificate for a name, from this daemon's orders or another's. */
  async alpn(hostname: string): Promise<SecureContext | undefined> {
    const now = Date.now();
    const mine = this.#alpn.get(hostname);
    if (mine && mine.expiresAt > now) return mine.context;
    const row = await this.#ctx.db
      .selectFrom('acme_challenges')
      .select(['cert_pem', 'key_enc', 'expires_at'])
      .where('token', '=', `alpn:${hostname}`)
      .executeTakeFirst();
    if (!row?.cert_pem || !row.key_enc || Number(row.expires_at) <= now) return undefined;
    const key = certBox(this.#ctx).open(row.key_enc);
    return key ? profiledContext(this.#ctx.config.tlsProfile, { cert: row.cert_pem, key }) : undefined;
  }

  async #keyAuthorization(token: string): Promise<string | undefined> {
    const now = Date.now();
    const mine = this.#http01.get(token);
    if (mine && mine.expiresAt > now) return mine.keyAuthorization;
    if (!/^[A-Za-z0-9_-]{1,256}$/.test(token)) return undefined;
    const row = await this.#ctx.db
      .selectFrom('acme_challenges')
      .select(['key_authorization', 'expires_at'])
      .where('token', '=', token)
      .where('type', '=', 'http-01')
      .executeTakeFirst();
    return row && Number(row.expires_at) > now ? row.key_authorization : undefined;
  }
}
