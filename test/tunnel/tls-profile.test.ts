import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { type OcspPki, startOcspPki } from '../helpers/ocsp.ts';
import { acceptedTls12Ciphers, probe } from '../helpers/tls-probe.ts';
import { until } from './helpers.ts';

/** Mozilla's intermediate TLS 1.2 suites, by certificate type. */
const RSA_SUITES = [
  'DHE-RSA-AES128-GCM-SHA256',
  'DHE-RSA-AES256-GCM-SHA384',
  'DHE-RSA-CHACHA20-POLY1305',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-RSA-CHACHA20-POLY1305',
];
const ECDSA_SUITES = ['ECDHE-ECDSA-AES128-GCM-SHA256', 'ECDHE-ECDSA-AES256-GCM-SHA384', 'ECDHE-ECDSA-CHACHA20-POLY1305'];
const TLS13_SUITES = ['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256'];

/** Every TLS 1.2 suite without AEAD: the CBC ones (LUCKY13), and NULL ciphers. */
const CBC = 'ALL:COMPLEMENTOFALL:!AESGCM:!CHACHA20:!AESCCM:!ARIAGCM';
/** Lets openssl offer what its default security level would keep back. */
const ANY = ':@SECLEVEL=0';

const portOf = (url: string) => Number(new URL(url).port);

/**
 * `--tls-profile` on every TLS listener (issue 25 item 4): the HTTPS edge
 * (SNI contexts of uploaded certificates, RSA and ECDSA) and the API with
 * --tls-cert, before and after a certificate reload. Each TLS 1.2 suite that
 * openssl knows is tried alone, as testssl's -E does. testssl.sh's LUCKY13
 * check says "not vulnerable" when no CBC suite is offered, which is what the
 * CBC probes check (testssl itself takes minutes on a loaded test host).
 */
describe('TLS profile: intermediate (the default)', () => {
  let pki: OcspPki;
  let daemon: TestDaemon;
  let edgePort: number;
  let apiPort: number;

  beforeAll(async () => {
    pki = await startOcspPki();
    const api = pki.issue('api', 0x20, { names: ['127.0.0.1'], rsa: true });
    daemon = await startDaemon({
      args: ['--edge-tls-listen', '127.0.0.1:0', '--tls-cert', api.certFile, '--tls-key', api.keyFile],
      ca: pki.ca,
    });
    for (const [name, rsa, serial] of [
      ['rsa.test', true, 0x21],
      ['ec.test', false, 0x22],
    ] as const) {
      const leaf = pki.issue(name, serial, { names: [name], rsa });
      await daemon.admin.call(operations.uploadCertificate, { body: { certificate: leaf.cert + pki.ca, privateKey: leaf.key } });
    }
    edgePort = portOf(daemon.edgeTlsUrl!);
    apiPort = portOf(daemon.url);
  });
  afterAll(async () => {
    await daemon?.stop();
    pki?.close();
  });

  it('edge, RSA certificate: TLS 1.2 only with ECDHE or DHE and AES-GCM or ChaCha20 (no plain RSA, no CBC)', async () => {
    expect(await acceptedTls12Ciphers(edgePort, 'rsa.test')).toEqual(RSA_SUITES);
    // Another client, offering a whole class at once: nothing of it is taken.
    expect(await probe(edgePort, 'rsa.test', ['-tls1_2', '-cipher', `kRSA${ANY}`])).toMatchObject({ ok: false });
    expect(await probe(edgePort, 'rsa.test', ['-tls1_2', '-cipher', `${CBC}${ANY}`])).toMatchObject({ ok: false });
  });

  it('edge, ECDSA certificate: TLS 1.2 only with ECDHE-ECDSA and AES-GCM or ChaCha20', async () => {
    expect(await acceptedTls12Ciphers(edgePort, 'ec.test')).toEqual(ECDSA_SUITES);
    expect(await probe(edgePort, 'ec.test', ['-tls1_2', '-cipher', `${CBC}${ANY}`])).toMatchObject({ ok: false });
  });

  it('edge: TLS 1.3 with its three suites; TLS 1.0 and 1.1 refused', async () => {
    for (const suite of TLS13_SUITES) {
      expect(await probe(edgePort, 'rsa.test', ['-tls1_3', '-ciphersuites', suite])).toMatchObject({
        ok: true,
        protocol: 'TLSv1.3',
        cipher: suite,
      });
    }
    for (const version of ['-tls1', '-tls1_1']) {
      expect((await probe(edgePort, 'rsa.test', [version, '-cipher', `ALL${ANY}`])).ok, version).toBe(false);
    }
  });

  it('edge: key exchange over X25519, P-256 or P-384 only, and DHE over a 2048-bit group', async () => {
    for (const [group, key] of [
      ['X25519', 'X25519'],
      ['P-256', 'ECDH, prime256v1'],
      ['P-384', 'ECDH, secp384r1'],
    ]) {
      for (const version of ['-tls1_2', '-tls1_3']) {
        const { ok, tempKey } = await probe(edgePort, 'rsa.test', [version, '-groups', group]);
        expect({ ok, tempKey }, `${group} ${version}`).toMatchObject({ ok: true, tempKey: expect.stringMatching(new RegExp(`^${key}`)) });
      }
    }
    // A client with P-521 alone: refused in TLS 1.3; in TLS 1.2 an RSA certificate falls back to DHE, never to P-521.
    expect((await probe(edgePort, 'rsa.test', ['-tls1_3', '-groups', 'P-521'])).ok).toBe(false);
    expect(await probe(edgePort, 'rsa.test', ['-tls1_2', '-groups', 'P-521'])).toMatchObject({
      cipher: expect.stringMatching(/^DHE-RSA-/),
      tempKey: 'DH, 2048 bits',
    });
    expect((await probe(edgePort, 'ec.test', ['-tls1_2', '-groups', 'P-521'])).ok).toBe(false);
    expect((await probe(edgePort, 'rsa.test', ['-tls1_2', '-cipher', 'DHE-RSA-AES128-GCM-SHA256'])).tempKey).toBe('DH, 2048 bits');
  });

  it("edge: the client's order of suites wins (every suite is strong; ChaCha20 for clients without AES hardware)", async () => {
    const order = 'ECDHE-RSA-CHACHA20-POLY1305:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-AES128-GCM-SHA256';
    expect(await probe(edgePort, 'rsa.test', ['-tls1_2', '-cipher', order])).toMatchObject({ cipher: 'ECDHE-RSA-CHACHA20-POLY1305' });
  });

  it('API listener: the same suites, and still after a reload of its certificate (SIGHUP)', async () => {
    expect(await acceptedTls12Ciphers(apiPort, '127.0.0.1')).toEqual(RSA_SUITES);
    daemon.proc.kill('SIGHUP');
    await until(() => daemon.logs.some((l) => l.msg === 'TLS certificate reloaded'));
    expect(await acceptedTls12Ciphers(apiPort, '127.0.0.1')).toEqual(RSA_SUITES);
    expect(await probe(apiPort, '127.0.0.1', ['-tls1_2', '-cipher', `kRSA${ANY}`])).toMatchObject({ ok: false });
    expect(await probe(apiPort, '127.0.0.1', ['-tls1_3'])).toMatchObject({ ok: true, protocol: 'TLSv1.3' });
    expect((await probe(apiPort, '127.0.0.1', ['-tls1_3', '-groups', 'P-521'])).ok).toBe(false);
  });
});

describe('TLS profile: modern (MONCTL_TLS_PROFILE=modern)', () => {
  let pki: OcspPki;
  let daemon: TestDaemon;

  beforeAll(async () => {
    pki = await startOcspPki();
    const api = pki.issue('api', 0x30, { names: ['127.0.0.1'], rsa: true });
    daemon = await startDaemon({
      args: ['--edge-tls-listen', '127.0.0.1:0', '--tls-cert', api.certFile, '--tls-key', api.keyFile],
      ca: pki.ca,
      env: { MONCTL_TLS_PROFILE: 'modern' },
    });
    const leaf = pki.issue('rsa', 0x31, { names: ['rsa.test'], rsa: true });
    await daemon.admin.call(operations.uploadCertificate, { body: { certificate: leaf.cert + pki.ca, privateKey: leaf.key } });
  });
  afterAll(async () => {
    await daemon?.stop();
    pki?.close();
  });

  it('refuses TLS 1.2 on the edge and the API, and serves TLS 1.3', async () => {
    for (const [port, name] of [
      [portOf(daemon.edgeTlsUrl!), 'rsa.test'],
      [portOf(daemon.url), '127.0.0.1'],
    ] as const) {
      expect((await probe(port, name, ['-tls1_2'])).ok, `${name} TLS 1.2`).toBe(false);
      for (const suite of TLS13_SUITES) {
        expect(await probe(port, name, ['-tls1_3', '-ciphersuites', suite]), name).toMatchObject({
          ok: true,
          protocol: 'TLSv1.3',
          cipher: suite,
        });
      }
      expect((await probe(port, name, ['-tls1_3', '-groups', 'P-521'])).ok, `${name} P-521`).toBe(false);
    }
  });
});
