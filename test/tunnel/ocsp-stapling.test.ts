import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { type OcspPki, startOcspPki } from '../helpers/ocsp.ts';
import { probe } from '../helpers/tls-probe.ts';
import { until } from './helpers.ts';

const portOf = (url: string) => Number(new URL(url).port);

/** What `openssl s_client -status` saw stapled: none, or the certificate's status in the response. */
async function stapled(port: number, servername: string): Promise<'none' | 'good' | 'revoked' | 'unknown'> {
  const { output } = await probe(port, servername, ['-status']);
  if (/OCSP response: no response sent/.test(output)) return 'none';
  const status = /Cert Status: (\w+)/.exec(output)?.[1];
  if (!status || !/OCSP Response Status: successful/.test(output)) throw new Error(`unexpected s_client output:\n${output}`);
  return status as 'good' | 'revoked' | 'unknown';
}

/**
 * OCSP stapling (issue 25 item 4) against a real `openssl ocsp` responder on
 * 127.0.0.1, named in the leaves' Authority Information Access. The daemon
 * refreshes every second (`--ocsp-refresh 1s`; the responder's answers are
 * valid a minute), so a revocation shows within seconds without a clock.
 */
describe('OCSP stapling', () => {
  let pki: OcspPki;
  let daemon: TestDaemon;
  let oversized: Server;
  let oversizedHits = 0;
  let silent: Server;
  let silentHits = 0;
  let edgePort: number;

  const upload = async (name: string, serial: number, ocsp?: boolean | string) => {
    const leaf = pki.issue(name, serial, { names: [name], ...(ocsp ? { ocsp } : {}) });
    await daemon.admin.call(operations.uploadCertificate, { body: { certificate: leaf.cert + pki.ca, privateKey: leaf.key } });
  };
  const metric = async (result: string) => {
    const text = (await daemon.admin.raw('GET', '/actuator/prometheus')).text;
    return Number(new RegExp(`^monctl_tls_ocsp_fetches_total\\{result="${result}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
  };

  beforeAll(async () => {
    pki = await startOcspPki();
    // A "responder" whose answer is far larger than any OCSP response.
    oversized = createServer((req, res) => {
      oversizedHits++;
      req.resume();
      res.writeHead(200, { 'content-type': 'application/ocsp-response' }).end(Buffer.alloc(200 * 1024));
    });
    await new Promise<void>((resolve) => oversized.listen(0, '127.0.0.1', resolve));
    // And one that reads the request and never answers.
    silent = createServer((req) => {
      silentHits++;
      req.resume();
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    // The API's certificate file is a full chain: the issuer is what OCSP requests name.
    const api = pki.issue('api', 0x40, { names: ['127.0.0.1'], ocsp: true });
    const chainFile = join(pki.dir, 'api-chain.pem');
    writeFileSync(chainFile, api.cert + pki.ca);
    daemon = await startDaemon({
      args: ['--edge-tls-listen', '127.0.0.1:0', '--ocsp-refresh', '1s', '--tls-cert', chainFile, '--tls-key', api.keyFile],
      ca: pki.ca,
    });
    await upload('plain.test', 0x41);
    await upload('ocsp.test', 0x42, true);
    await upload('big.test', 0x43, `http://127.0.0.1:${(oversized.address() as AddressInfo).port}`);
    await upload('silent.test', 0x44, `http://127.0.0.1:${(silent.address() as AddressInfo).port}`);
    edgePort = portOf(daemon.edgeTlsUrl!);
  });
  afterAll(async () => {
    await daemon?.stop();
    pki?.close();
    oversized?.close();
    silent?.closeAllConnections();
    silent?.close();
  });

  it('staples nothing and fetches nothing for a certificate without an OCSP URL', async () => {
    for (let i = 0; i < 3; i++) expect(await stapled(edgePort, 'plain.test')).toBe('none');
    expect(pki.answered()).toBe(0);
    expect((await metric('good')) + (await metric('failed'))).toBe(0);
  });

  it('serves the first handshake without a staple (never waiting on the responder), then staples "good"', async () => {
    expect(await stapled(edgePort, 'ocsp.test')).toBe('none');
    expect(await until(async () => (await stapled(edgePort, 'ocsp.test')) === 'good')).toBe(true);
    expect(pki.answered()).toBeGreaterThan(0);
    expect(await metric('good')).toBeGreaterThan(0);
  });

  it('staples the revocation once the responder says so, at the next refresh', async () => {
    pki.revoke(0x42);
    await until(async () => (await stapled(edgePort, 'ocsp.test')) === 'revoked');
    expect(
      daemon.logs.some(
        (l) => l.msg === 'OCSP: the certificate is revoked; stapling the revocation' && /serial 42$/.test(String(l.certificate)),
      ),
    ).toBe(true);
  });

  it('staples on the API listener (--tls-cert) too', async () => {
    await until(async () => (await stapled(portOf(daemon.url), '127.0.0.1')) === 'good');
  });

  it('refuses an answer larger than its bound: logged, counted, nothing stapled', async () => {
    expect(await stapled(edgePort, 'big.test')).toBe('none');
    await until(() =>
      daemon.logs.some((l) => l.msg === 'OCSP: fetching the response failed' && /larger than 65536 bytes/.test(String(l.error))),
    );
    expect(oversizedHits).toBeGreaterThan(0);
    expect(await stapled(edgePort, 'big.test')).toBe('none');
    expect(await metric('failed')).toBeGreaterThan(0);
  });

  it("staples an answer signed by the CA's delegated OCSP signer, and never one signed by a stranger", async () => {
    await upload('delegate.test', 0x45, await pki.otherResponder('delegate'));
    await upload('forged.test', 0x46, await pki.otherResponder('stranger'));
    expect(await stapled(edgePort, 'forged.test')).toBe('none');
    await until(async () => (await stapled(edgePort, 'delegate.test')) === 'good');
    await until(() =>
      daemon.logs.some(
        (l) =>
          l.msg === 'OCSP: fetching the response failed' &&
          /serial 46$/.test(String(l.certificate)) &&
          /signature does not verify/.test(String(l.error)),
      ),
    );
    expect(await stapled(edgePort, 'forged.test')).toBe('none');
  });

  it('gives up on a responder that does not answer within 10 s, without holding handshakes', async () => {
    expect(await stapled(edgePort, 'silent.test')).toBe('none');
    await until(() => silentHits > 0);
    // While the fetch hangs, handshakes go on without a staple.
    expect(await stapled(edgePort, 'silent.test')).toBe('none');
    await until(() =>
      daemon.logs.some((l) => l.msg === 'OCSP: fetching the response failed' && /no answer within 10000 ms/.test(String(l.error))),
    );
  }, 60_000);

  it('keeps stapling the last answer while the responder is down, and logs the failures', async () => {
    pki.stopResponder();
    await until(() => daemon.logs.some((l) => l.msg === 'OCSP: fetching the response failed' && /serial 42$/.test(String(l.certificate))));
    expect(await stapled(edgePort, 'ocsp.test')).toBe('revoked');
  });
});
