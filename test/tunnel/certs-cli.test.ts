import { X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminRunner, tempHome } from '../cli/run.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { makePki, type TestPki } from '../helpers/tls.ts';
import { operations } from '../../src/api/operations.ts';
import { servedFor } from './tls-edge.ts';

/** `monctl certs add|list|get|rm` against a daemon with the HTTPS edge; the key is sealed in the database. */
describe('monctl certs', () => {
  let d: TestDaemon;
  let pki: TestPki;
  let home: ReturnType<typeof tempHome>;
  let monctl: ReturnType<typeof adminRunner>;

  beforeAll(async () => {
    d = await startDaemon({ args: ['--edge-tls-listen', '127.0.0.1:0'] });
    pki = makePki('cli test CA');
    home = tempHome();
    monctl = adminRunner(d, home.dir);
  });
  afterAll(async () => {
    await d?.stop();
    pki?.cleanup();
    home?.cleanup();
  });

  it('uploads a wildcard certificate, lists and gets it by hostname, serves it, and deletes it', async () => {
    const pair = pki.issueNames('star', 41, ['*.apps.test', 'apps.test']);
    const add = await monctl(['certs', 'add', '--cert', pair.certFile, '--key', '-', '-o', 'json'], { input: pair.key });
    expect(add.code, add.stderr).toBe(0);
    expect(add.json()).toMatchObject({
      source: 'UPLOAD',
      hostnames: ['*.apps.test', 'apps.test'],
      state: 'VALID',
      issuer: 'CN=cli test CA',
    });
    expect(add.stdout).not.toContain('PRIVATE KEY');
    const serial = new X509Certificate(pair.cert).serialNumber;
    expect(await servedFor(d.edgeTlsUrl!, 'one.apps.test', pki.ca)).toMatchObject({ serial });

    // The route detail shows the certificate its hostname gets.
    const agent = await d.admin.call(operations.createAgent, { body: { name: 'office' } });
    await d.admin.call(operations.createRoute, {
      body: { name: 'one', type: 'HTTP', agentId: agent.id, target: 'http://127.0.0.1:9', hostname: 'one.apps.test' },
    });
    const route = await monctl(['routes', 'get', 'one']);
    expect(route.code, route.stderr).toBe(0);
    expect(route.stdout).toContain(`\nCERTIFICATE\tVALID UPLOAD until ${add.json().notAfter}\n`);

    const list = await monctl(['certs', 'list']);
    expect(list.stdout.split('\n')[0].split('\t')).toEqual(['ID', 'HOSTNAMES', 'SOURCE', 'STATE', 'NOT-AFTER', 'ISSUER', 'LAST-ERROR']);
    expect(list.stdout).toMatch(/\*\.apps\.test,apps\.test\tUPLOAD\tVALID/);
    const get = await monctl(['certs', 'get', 'apps.test', '-o', 'json']);
    expect(get.json()).toMatchObject({ id: add.json().id, serial });

    // Sealed at rest: the database (and its WAL) hold the certificate in PEM, but not the key.
    const stored = Buffer.concat(
      ['monctl.db', 'monctl.db-wal'].filter((f) => existsSync(join(d.dataDir, f))).map((f) => readFileSync(join(d.dataDir, f))),
    );
    expect(stored.includes(pair.cert.split('\n')[1])).toBe(true);
    expect(stored.includes('PRIVATE KEY')).toBe(false);
    expect(stored.includes(pair.key.split('\n')[1])).toBe(false);

    expect((await monctl(['certs', 'rm', 'apps.test'])).code).toBe(2);
    const rm = await monctl(['certs', 'rm', 'apps.test', '--yes']);
    expect(rm.code, rm.stderr).toBe(0);
    expect(await servedFor(d.edgeTlsUrl!, 'one.apps.test', pki.ca)).toHaveProperty('error');
    expect((await monctl(['certs', 'get', 'apps.test'])).code).toBe(3);
    expect((await monctl(['routes', 'get', 'one'])).stdout).toContain('\nCERTIFICATE\tNONE\n');
  });

  it('names the field of a bad upload and exits 1', async () => {
    const pair = pki.issueNames('only', 42, ['only.test']);
    const res = await monctl(['certs', 'add', '--cert', pair.certFile, '--key', pair.keyFile, '--hostname', 'other.test']);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/hostnames\[0\].*not covered/);
  });
});
