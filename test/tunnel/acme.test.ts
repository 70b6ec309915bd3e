import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { adminRunner, tempHome } from '../cli/run.ts';
import { freePort } from '../helpers/free-port.ts';
import { makePki } from '../helpers/tls.ts';
import { type Receiver, startReceiver } from '../notifiers/receivers.ts';
import { edge, startTarget, until } from './helpers.ts';
import { type AcmeWorld, startAcmeWorld } from './acme-world.ts';
import { servedFor, tlsEdge } from './tls-edge.ts';

const run = promisify(execFile);

/**
 * ACME against Debian's pebble: a route's hostname gets a certificate by
 * HTTP-01 (plain edge) and, on another daemon, by TLS-ALPN-01 (TLS edge);
 * curl with pebble's root verifies the chain through the HTTPS edge; a
 * shorter renewal threshold renews it.
 */
describe('ACME: HTTP-01, then a renewal', () => {
  let world: AcmeWorld;
  let target: Awaited<ReturnType<typeof startTarget>>;
  let root: string;

  beforeAll(async () => {
    target = await startTarget((req, res) => res.end(`hello ${req.headers['x-forwarded-proto']} ${req.url}`));
    world = await startAcmeWorld({ challenges: 'http-01' });
    root = await world.pebble.root();
  }, 60_000);
  afterAll(async () => {
    await world?.close();
    await target?.close();
  });

  it('issues a certificate for a new route hostname by HTTP-01, which curl verifies through the HTTPS edge', async () => {
    // A hostname an uploaded certificate covers gets no ACME order.
    const pki = makePki('upload CA');
    try {
      const pair = pki.issueNames('up', 71, ['up.test']);
      await world.d.admin.call(operations.uploadCertificate, { body: { certificate: pair.cert, privateKey: pair.key } });
    } finally {
      pki.cleanup();
    }
    await world.d.admin.call(operations.createRoute, {
      body: { name: 'up', type: 'HTTP', agentId: world.agentId, target: target.url, hostname: 'up.test' },
    });
    const route = await world.d.admin.call(operations.createRoute, {
      body: { name: 'one', type: 'HTTP', agentId: world.agentId, target: target.url, hostname: 'one.test' },
    });
    const cert = await world.certificateOf('one.test');
    expect(cert, world.pebble.logs()).toMatchObject({
      state: 'VALID',
      source: 'ACME',
      hostnames: ['one.test'],
      challenge: 'http-01',
      lastError: null,
      failures: 0,
    });
    expect(cert.issuer).toMatch(/Pebble Intermediate/);
    // Renewed at two thirds of its lifetime by default (the API's times are to the second).
    const [notBefore, notAfter] = [Date.parse(cert.notBefore!), Date.parse(cert.notAfter!)];
    expect(Math.abs(Date.parse(cert.renewAt!) - (notBefore + ((notAfter - notBefore) * 2) / 3))).toBeLessThanOrEqual(1_000);
    expect(
      (await world.d.admin.call(operations.listCertificates)).filter((c) => c.hostnames.includes('up.test')).map((c) => c.source),
    ).toEqual(['UPLOAD']);

    const rootFile = join(world.d.dataDir, '..', 'pebble-root.pem');
    writeFileSync(rootFile, root);
    // Asynchronously: the target runs in this process.
    const curl = await run('curl', [
      '--silent',
      '--show-error',
      '--fail',
      '--cacert',
      rootFile,
      '--resolve',
      `one.test:${world.tlsPort}:127.0.0.1`,
      `https://one.test:${world.tlsPort}/via-curl`,
    ]);
    expect(curl.stdout).toBe('hello https /via-curl');
    const h2 = await run('curl', [
      '--silent',
      '--http2',
      '--cacert',
      rootFile,
      '--resolve',
      `one.test:${world.tlsPort}:127.0.0.1`,
      '-o',
      '/dev/null',
      '-w',
      '%{http_version}',
      `https://one.test:${world.tlsPort}/`,
    ]);
    expect(h2.stdout).toBe('2');

    const detail = await world.d.admin.call(operations.getRoute, { params: { id: route.id } });
    expect(detail.certificate).toMatchObject({ state: 'VALID', source: 'ACME', certificateId: cert.id, lastError: null });
  });

  it("issues a certificate for a status page's custom hostname by HTTP-01 although the page redirects plain HTTP to HTTPS", async () => {
    await world.d.admin.call(operations.createStatusPage, {
      body: { slug: 'main', title: 'Status', customHostname: 'status.test', httpsRedirect: true },
    });
    const cert = await world.certificateOf('status.test');
    expect(cert, world.pebble.logs()).toMatchObject({
      state: 'VALID',
      source: 'ACME',
      hostnames: ['status.test'],
      challenge: 'http-01',
      lastError: null,
    });
    const plain = await edge(world.d.edgeUrl, 'status.test', 'GET', '/');
    expect(plain.status).toBe(308);
    const res = await tlsEdge(`https://127.0.0.1:${world.tlsPort}`, 'status.test', '/', root);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
  });

  it('renews the certificate once the renewal threshold is shortened', async () => {
    const before = await world.certificateOf('one.test');
    // A threshold of a billionth of the lifetime: due at once.
    await world.restart(['--acme-renew-at', '0.000000001']);
    const after = await world.certificateOf('one.test', (c) => c.serial !== before.serial && c.state === 'VALID');
    expect(after.id).toBe(before.id);
    const served = await servedFor(`https://127.0.0.1:${world.tlsPort}`, 'one.test', root);
    expect(served).toMatchObject({ serial: after.serial });
    const res = await tlsEdge(`https://127.0.0.1:${world.tlsPort}`, 'one.test', '/renewed', root);
    expect(res.text).toBe('hello https /renewed');
  });
});

describe('ACME: TLS-ALPN-01', () => {
  let world: AcmeWorld;
  let target: Awaited<ReturnType<typeof startTarget>>;

  beforeAll(async () => {
    target = await startTarget((req, res) => res.end(`hello ${req.url}`));
    world = await startAcmeWorld({ challenges: 'tls-alpn-01' });
  }, 60_000);
  afterAll(async () => {
    await world?.close();
    await target?.close();
  });

  it("issues a certificate by TLS-ALPN-01 on the TLS edge, chained to pebble's root", async () => {
    await world.d.admin.call(operations.createRoute, {
      body: { name: 'two', type: 'HTTP', agentId: world.agentId, target: target.url, hostname: 'two.test' },
    });
    const cert = await world.certificateOf('two.test');
    expect(cert, world.pebble.logs()).toMatchObject({ state: 'VALID', challenge: 'tls-alpn-01', lastError: null });
    const res = await tlsEdge(`https://127.0.0.1:${world.tlsPort}`, 'two.test', '/alpn', await world.pebble.root());
    expect(res.status).toBe(200);
    expect(res.text).toBe('hello /alpn');
  });
});

describe('ACME: a refused challenge', () => {
  let world: AcmeWorld;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    // Pebble validates HTTP-01 on a port where nothing listens: every challenge is refused.
    world = await startAcmeWorld({ challenges: 'http-01', pebbleHttpPort: await freePort(), pebbleEnv: { PEBBLE_VA_ALWAYS_VALID: '0' } });
  }, 60_000);
  afterAll(async () => {
    await world?.close();
    await receiver?.close();
  });

  it('shows the failure as lastError, in the metrics, and as a CERT_RENEWAL_FAILED alert routed to a notifier; no new order within the hour', async () => {
    const notifier = await world.d.admin.call(operations.createNotifier, {
      body: { name: 'ops', type: 'WEBHOOK', config: { url: receiver.url } },
    });
    await world.d.admin.call(operations.createAlertRule, {
      body: { name: 'certs', events: ['CERT_RENEWAL_FAILED'], notifierIds: [notifier.id], groupWaitSeconds: 0 },
    });
    const route = await world.d.admin.call(operations.createRoute, {
      body: { name: 'bad', type: 'HTTP', agentId: world.agentId, target: 'http://127.0.0.1:9', hostname: 'bad.test' },
    });
    const cert = await world.certificateOf('bad.test');
    expect(cert).toMatchObject({ state: 'FAILED', failures: 1, source: 'ACME' });
    expect(cert.lastError).toMatch(/connection refused|Connection refused|connect/i);
    expect(Date.parse(cert.nextAttemptAt!) - Date.parse(cert.lastErrorAt!)).toBeGreaterThanOrEqual(60 * 60_000);
    expect((await world.d.admin.call(operations.getRoute, { params: { id: route.id } })).certificate).toMatchObject({
      state: 'FAILED',
      lastError: cert.lastError,
    });
    const home = tempHome();
    try {
      const get = await adminRunner(world.d, home.dir)(['routes', 'get', 'bad']);
      expect(get.code, get.stderr).toBe(0);
      expect(get.stdout).toContain(`\nCERTIFICATE\tFAILED ACME (${cert.lastError!.replace(/[\t\n]/g, ' ')})\n`);
    } finally {
      home.cleanup();
    }

    const metrics = await (await fetch(`${world.d.url}/actuator/prometheus`)).text();
    expect(metrics).toMatch(/^monctl_acme_orders_total\{result="failed"\} 1$/m);
    expect(metrics).toMatch(/^monctl_acme_certificates_failing 1$/m);

    const delivered = await until(() => receiver.received.find((r) => r.body.includes('CERT_RENEWAL_FAILED')));
    const { data } = JSON.parse(delivered.body);
    expect(data.title).toBe('Certificate renewal failed: bad.test');
    expect(data.items[0]).toMatchObject({
      kind: 'CERT_RENEWAL_FAILED',
      subject: { type: 'certificate', id: cert.id, name: 'bad.test' },
      cause: { message: cert.lastError, errorCode: 'ACME_ORDER_FAILED' },
    });

    // Another pass (a route change starts one) does not order again before nextAttemptAt.
    await world.d.admin.call(operations.updateRoute, { params: { id: route.id }, body: { httpsRedirect: true } });
    await new Promise((r) => setTimeout(r, 1_000));
    expect((await world.d.admin.call(operations.getCertificate, { params: { id: cert.id } })).failures).toBe(1);
    const again = await (await fetch(`${world.d.url}/actuator/prometheus`)).text();
    expect(again).toMatch(/^monctl_acme_orders_total\{result="failed"\} 1$/m);
  });
});
