import { X509Certificate } from 'node:crypto';
import { createSecureContext, getCACertificates, setDefaultCACertificates } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePki, type TestPki } from '../helpers/tls.ts';
import { plainServer, selfSigned, type Target, tlsChecker, tlsServer } from './helpers/tls-targets.ts';

/**
 * TLS checks against node TLS servers with certificates that openssl makes here: one expiring in
 * 2 days, one for another name, one self-signed, and a server capped at TLS 1.2. The test CA is
 * added to the process's default roots, as NODE_EXTRA_CA_CERTS adds it to the daemon's.
 */
let pki: TestPki;
let twoDays: Target;
let named: Target;
let self: Target;
let tls12: Target;
let silent: Target;
let notAfter: number;
const checker = tlsChecker(2_000);
const check = checker.check;

beforeAll(async () => {
  pki = makePki('monctl tls probe CA');
  setDefaultCACertificates([...getCACertificates('default'), pki.ca]);
  const short = pki.issue('two-days', 1, 2);
  notAfter = Date.parse(new X509Certificate(short.cert).validTo);
  twoDays = await tlsServer({ cert: short.cert, key: short.key });
  const other = pki.issueNames('named', 2, ['tls.monctl.test']);
  named = await tlsServer({ cert: other.cert, key: other.key });
  self = await tlsServer(selfSigned(pki));
  tls12 = await tlsServer({ cert: short.cert, key: short.key, maxVersion: 'TLSv1.2', ciphers: 'ECDHE-ECDSA-AES128-GCM-SHA256' });
  // Accepts and never answers the ClientHello.
  silent = await plainServer(() => undefined);
});

afterAll(async () => {
  await checker.runner.close();
  await Promise.all([twoDays, named, self, tls12, silent].map((t) => t?.close()));
  pki?.cleanup();
});

const at = (t: Target) => `127.0.0.1:${t.port}`;

describe('TLS checks', () => {
  it('a trusted certificate is AVAILABLE, with its notAfter, version, cipher and phases', async () => {
    const r = await check(at(twoDays));
    expect(r).toMatchObject({ status: 'AVAILABLE', errorCode: null, certNotAfter: notAfter, message: 'TLSv1.3 TLS_AES_256_GCM_SHA384' });
    expect(r.timing?.connectMs).toBeTypeOf('number');
    expect(r.timing?.tlsMs).toBeTypeOf('number');
    expect(r.timing?.dnsMs).toBeNull();
  });

  it('[CERTIFICATE_EXPIRATION] reads the time left: > 72h fails, < 72h holds', async () => {
    const over = await check(at(twoDays), {}, { conditions: ['[CERTIFICATE_EXPIRATION] > 72h'] });
    expect(over).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONDITION_FAILED', certNotAfter: notAfter });
    const under = await check(at(twoDays), {}, { conditions: ['[CERTIFICATE_EXPIRATION] < 72h', '[CERTIFICATE_EXPIRATION] > 24h'] });
    expect(under.status).toBe('AVAILABLE');
  });

  it('[TLS_VERSION] and [TLS_CIPHER] read what the handshake agreed', async () => {
    const ok = await check(
      at(tls12),
      {},
      {
        conditions: ['[TLS_VERSION] == TLSv1.2', '[TLS_CIPHER] == TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', '[CONNECTED] == true'],
      },
    );
    expect(ok).toMatchObject({ status: 'AVAILABLE', message: 'TLSv1.2 TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256' });
    const report = await check(at(tls12), {}, { conditions: ['[TLS_VERSION] == TLSv1.3'] }, true);
    expect(report).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONDITION_FAILED' });
    expect(report.report?.conditions).toEqual([
      { condition: '[TLS_VERSION] == TLSv1.3', ok: false, message: '[TLS_VERSION] (TLSv1.2) == TLSv1.3' },
    ]);
  });

  it('a server capped at TLS 1.2 fails minVersion TLSv1.3 with the protocol version as the reason', async () => {
    const r = await check(at(tls12), { minVersion: 'TLSv1.3' });
    expect(r).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'TLS_ERROR' });
    expect(r.message).toMatch(/^TLS handshake failed: .*protocol version/i);
    expect(r.certNotAfter).toBeUndefined();
  });

  it('a certificate for another name is TLS_ERROR; the SNI it is for makes it AVAILABLE', async () => {
    const wrong = await check(at(named), { sni: 'wrong.monctl.test' });
    expect(wrong).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'TLS_ERROR' });
    expect(wrong.message).toMatch(/^certificate not valid for the name: .*wrong\.monctl\.test/);
    // No SNI, the IP is verified: the certificate names no IP.
    expect((await check(at(named))).message).toMatch(/^certificate not valid for the name: .*127\.0\.0\.1/);
    expect((await check(at(named), { sni: 'tls.monctl.test' })).status).toBe('AVAILABLE');
  });

  it('SNI is the host name of the target, none for an IP address, else the sni option', async () => {
    const local = pki.issueNames('localhost', 3, ['localhost']);
    const names: string[] = [];
    const context = createSecureContext({ cert: local.cert, key: local.key });
    const server = await tlsServer({
      ...local,
      SNICallback: (name, cb) => {
        names.push(name);
        cb(null, context);
      },
    });
    try {
      expect((await check(`localhost:${server.port}`)).status).toBe('AVAILABLE');
      expect(names).toEqual(['localhost']);
      // By IP: no SNI, and the certificate (for localhost) is checked against the IP.
      expect((await check(at(server))).errorCode).toBe('TLS_ERROR');
      expect((await check(at(server), { sni: 'localhost' })).status).toBe('AVAILABLE');
      expect(names).toEqual(['localhost', 'localhost']);
    } finally {
      await server.close();
    }
  });

  it('an expired certificate is TLS_ERROR saying so, with its notAfter in the past', async () => {
    // openssl takes -days -1: notAfter a day before notBefore (now).
    const old = pki.issue('expired', 4, -1);
    const server = await tlsServer({ cert: old.cert, key: old.key });
    try {
      const r = await check(at(server));
      expect(r).toMatchObject({
        status: 'NOT_AVAILABLE',
        errorCode: 'TLS_ERROR',
        message: 'certificate not trusted: the certificate has expired',
      });
      expect(r.certNotAfter).toBeLessThan(Date.now());
    } finally {
      await server.close();
    }
  });

  it('a self-signed certificate is TLS_ERROR, AVAILABLE with skipTLS', async () => {
    const r = await check(at(self));
    expect(r).toMatchObject({
      status: 'NOT_AVAILABLE',
      errorCode: 'TLS_ERROR',
      message: 'certificate not trusted: the certificate is self-signed',
    });
    // The handshake did complete: its certificate's expiry is still known.
    expect(r.certNotAfter).toBeTypeOf('number');
    expect((await check(at(self), {}, { skipTLS: true })).status).toBe('AVAILABLE');
  });

  it('a refused port is CONNECTION_ERROR; a server silent to the ClientHello is TLS_ERROR at the timeout', async () => {
    const closed = await plainServer(() => undefined);
    const port = closed.port;
    await closed.close();
    const refused = await check(`127.0.0.1:${port}`, {}, { conditions: ['[CONNECTED] == true'] }, true);
    expect(refused).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONNECTION_ERROR' });
    expect(refused.message).toMatch(/ECONNREFUSED/);
    expect(refused.report?.conditions[0]).toMatchObject({ ok: false, message: '[CONNECTED] (false) == true' });
    const stalled = await check(at(silent));
    expect(stalled).toMatchObject({
      status: 'NOT_AVAILABLE',
      errorCode: 'TLS_ERROR',
      message: 'TLS handshake failed: timeout after 2000 ms',
    });
  });

  it('a target that is not host:port is CONNECTION_ERROR', async () => {
    expect(await check('127.0.0.1')).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONNECTION_ERROR' });
  });
});
