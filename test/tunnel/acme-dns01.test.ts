import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect as h2connect } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { DnsUpdater } from '../../daemon/certs/acme/dns/rfc2136.ts';
import { readTsigKey } from '../../daemon/config/rfc2136.ts';
import { runMonctl } from '../cli/run.ts';
import { type Knot, startKnot } from '../helpers/knot.ts';
import { startTarget } from './helpers.ts';
import { type AcmeWorld, startAcmeWorld } from './acme-world.ts';
import { h2Request } from './tls-edge.ts';

/** One HTTP/2 GET through the HTTPS edge with SNI `host`, the chain verified against `ca`. */
async function h2Get(edgeTlsPort: number, host: string, path: string, ca: string) {
  const session = h2connect(`https://127.0.0.1:${edgeTlsPort}`, { ca, servername: host });
  try {
    await new Promise((resolve, reject) => {
      session.once('connect', resolve);
      session.once('error', reject);
    });
    const socket = session.socket as TLSSocket;
    const response = await h2Request(session, path, host);
    return { ...response, alpn: socket.alpnProtocol, san: socket.getPeerCertificate().subjectaltname };
  } finally {
    session.close();
  }
}

/**
 * Wildcard certificates by ACME DNS-01: pebble resolves through a real Knot
 * DNS on loopback, which takes the daemon's RFC 2136 updates signed with a
 * TSIG key. One daemon, restarted with the setting: first without it (a
 * wildcard is FAILED, no order sent), then with a secret knot refuses
 * (NOTAUTH, BADSIG), then with the right key (*.apps.test issued and served
 * to x.apps.test and y.apps.test over HTTP/2, the TXT record removed).
 */
describe('ACME DNS-01 through RFC 2136 with TSIG (knot), a wildcard certificate over HTTP/2', () => {
  let knot: Knot;
  let world: AcmeWorld;
  let target: Awaited<ReturnType<typeof startTarget>>;
  let dir: string;
  let setting: (keyFile: string) => string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'monctl-dns01-'));
    knot = await startKnot('apps.test');
    setting = (keyFile) => `127.0.0.1:${knot.port},${knot.keyName},${keyFile}`;
    target = await startTarget((req, res) => res.end(`hello ${req.url}`));
    world = await startAcmeWorld({ challenges: 'http-01', pebbleDns: `127.0.0.1:${knot.port}` });
  }, 60_000);
  afterAll(async () => {
    await world?.close();
    await target?.close();
    await knot?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('adds a TXT record beside others and sees it over TCP when the UDP answer is truncated, then deletes only it', async () => {
    const key = readTsigKey(knot.keyFile, knot.keyName);
    const updater = new DnsUpdater({ server: { host: knot.host, port: knot.port }, keyName: knot.keyName, ...key });
    const name = '_acme-challenge.big.apps.test';
    const before = await knot.txt(name);
    expect(before).toHaveLength(6);
    expect(await updater.zoneOf(name)).toBe('apps.test');
    // The answer holding the new record is over 1,200 bytes: knot truncates it over UDP, the wait for it reads it over TCP.
    await updater.add(name, 'monctl-dns01-probe');
    expect((await knot.txt(name)).sort()).toEqual([...before, 'monctl-dns01-probe'].sort());
    await updater.remove(name, 'monctl-dns01-probe');
    expect((await knot.txt(name)).sort()).toEqual([...before].sort());
  });

  it('refuses a bad --acme-dns-rfc2136 at start (exit 2, naming the setting)', async () => {
    const start = (value: string, acme = ['--acme-directory', 'https://acme.example.test/dir']) =>
      runMonctl(['daemon', '--print-config', ...acme, '--acme-dns-rfc2136', value]);
    const garbage = join(dir, 'garbage.key');
    writeFileSync(garbage, 'not a key\n');
    const cases: Array<[string, RegExp, string[]?]> = [
      ['127.0.0.1:53,only-two', /--acme-dns-rfc2136: must be SERVER\[:PORT\],KEYNAME,SECRET-FILE/],
      [setting(join(dir, 'absent.key')), /--acme-dns-rfc2136: cannot read .*absent\.key: ENOENT/],
      [setting(garbage), /--acme-dns-rfc2136: .*garbage\.key must hold a base64 secret or a BIND key clause/],
      [setting(knot.keyFile), /--acme-dns-rfc2136 is set but acmeDirectory is not/, []],
    ];
    for (const [value, message, acme] of cases) {
      const run = await start(value, acme);
      expect(run.code, value).toBe(2);
      expect(run.stderr).toMatch(message);
    }
    // The key file as knot's keymgr and BIND's tsig-keygen print it, or the bare base64 secret.
    const bare = join(dir, 'bare.key');
    writeFileSync(bare, `${randomBytes(32).toString('base64')}\n`);
    for (const file of [knot.keyFile, bare]) {
      const run = await start(setting(file));
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain(`acmeDnsRfc2136: 127.0.0.1:${knot.port},${knot.keyName},${file}`);
    }
  });

  it('marks a wildcard route hostname FAILED without --acme-dns-rfc2136, ordering nothing', async () => {
    const route = await world.d.admin.call(operations.createRoute, {
      body: { name: 'bad', type: 'HTTP', agentId: world.agentId, target: target.url, hostname: '*.bad.apps.test' },
    });
    const cert = await world.certificateOf('*.bad.apps.test');
    expect(cert).toMatchObject({ state: 'FAILED', source: 'ACME', hostnames: ['*.bad.apps.test'] });
    expect(cert.lastError).toMatch(/DNS-01.*--acme-dns-rfc2136/);
    const detail = await world.d.admin.call(operations.getRoute, { params: { id: route.id } });
    expect(detail.certificate).toMatchObject({ state: 'FAILED', lastError: cert.lastError });
    // Pebble logs every request: a new order is a POST to /order-plz.
    expect(world.pebble.logs()).toContain('GET /dir');
    expect(world.pebble.logs()).not.toContain('/order-plz');
  });

  it('fails the order with NOTAUTH (TSIG BADSIG) when knot refuses the key, and the daemon goes on', async () => {
    const wrong = join(dir, 'wrong.key');
    writeFileSync(wrong, `key "${knot.keyName}" { algorithm hmac-sha256; secret "${randomBytes(32).toString('base64')}"; };\n`);
    await world.restart(['--acme-dns-rfc2136', setting(wrong)]);
    const cert = await world.certificateOf('*.bad.apps.test', (c) => /NOTAUTH/.test(c.lastError ?? ''));
    expect(cert.state).toBe('FAILED');
    expect(cert.lastError).toMatch(/NOTAUTH \(TSIG BADSIG\)/);
    expect(await knot.txt('_acme-challenge.bad.apps.test')).toEqual([]);
    expect((await world.d.admin.call(operations.listAgents)).length).toBe(1);
    const [bad] = (await world.d.admin.call(operations.listRoutes)).filter((r) => r.name === 'bad');
    await world.d.admin.call(operations.deleteRoute, { params: { id: bad.id } });
  });

  it('issues *.apps.test through knot and serves it to x.apps.test and y.apps.test over HTTP/2; the TXT record is gone', async () => {
    await world.restart(['--acme-dns-rfc2136', setting(knot.keyFile)]);
    await world.d.admin.call(operations.createRoute, {
      body: { name: 'apps', type: 'HTTP', agentId: world.agentId, target: target.url, hostname: '*.apps.test' },
    });
    const cert = await world.certificateOf('*.apps.test');
    expect(cert, `${world.pebble.logs()}\n${knot.logs()}`).toMatchObject({
      state: 'VALID',
      source: 'ACME',
      hostnames: ['*.apps.test'],
      challenge: 'dns-01',
      lastError: null,
    });
    expect(knot.logs()).toMatch(/DDNS, finished/);
    const root = await world.pebble.root();
    for (const host of ['x.apps.test', 'y.apps.test']) {
      const res = await h2Get(world.tlsPort, host, `/via-${host}`, root);
      expect(res).toEqual({ status: 200, body: `hello /via-${host}`, alpn: 'h2', san: 'DNS:*.apps.test' });
    }
    expect(await knot.txt('_acme-challenge.apps.test')).toEqual([]);
  });
});
