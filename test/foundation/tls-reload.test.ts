import { X509Certificate } from 'node:crypto';
import { mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { agentSlot, type HttpsStream, httpsStream, makePki, servedCertificate, type TestPki } from '../helpers/tls.ts';
import { edge, startAgent, startTarget, type TestAgent, until } from '../tunnel/helpers.ts';

/**
 * Certificate rotation on a running daemon: SIGHUP, and a change of the files
 * on disk, reach new TLS connections, while connections opened before (an SSE
 * stream, the agent's tunnel) stay up on the old certificate. The daemon is
 * given `live/cert.pem` and `live/key.pem`, symlinks into `archive/` (the
 * certbot layout): rewriting `archive/` is invisible to the directory watch,
 * so only SIGHUP can pick it up; replacing the files in `live/` is what the
 * watch is for.
 */
let pki: TestPki;
let d: TestDaemon;
let port: number;
let stream: HttpsStream;
let agent: TestAgent;
let target: Awaited<ReturnType<typeof startTarget>>;
const pairs = {} as Record<'a' | 'b' | 'c' | 'd', ReturnType<TestPki['issue']> & { sha256: string }>;
let live: string;
let archive: string;
let streamOpenedAt: number;
/** A client that completes the handshake, then never finishes its request line. */
const slow = { text: '', closed: false };

const reloaded = (trigger: string, pair: { sha256: string }) => () =>
  d.logs.some((l) => l.msg === 'TLS certificate reloaded' && l.trigger === trigger && l.sha256 === pair.sha256);
const failures = () => d.logs.filter((l) => l.msg === 'TLS reload failed; still serving the previous certificate');
const served = async () => (await servedCertificate(port, pki.ca)).fingerprint256;
/** Writes next to the file and renames over it, as certificate tools do. */
const replace = (file: string, text: string) => {
  writeFileSync(`${file}.tmp`, text);
  renameSync(`${file}.tmp`, file);
};

/** An event that happens after the swap reaches the stream opened before it, still on its first connection. */
async function streamStillLive(name: string) {
  await d.admin.call(operations.createAgent, { body: { name } });
  await until(() => stream.events.some((e) => e.event === 'AGENT_CREATED' && e.data.agent.name === name));
  expect(stream.ended()).toBe(false);
  expect(stream.socket.getPeerCertificate().fingerprint256).toBe(pairs.a.sha256);
}

beforeAll(async () => {
  pki = makePki();
  for (const [name, serial] of [
    ['a', 0xa1],
    ['b', 0xb2],
    ['c', 0xc3],
    ['d', 0xd4],
  ] as const) {
    const pair = pki.issue(name, serial);
    pairs[name] = { ...pair, sha256: new X509Certificate(pair.cert).fingerprint256 };
  }
  [live, archive] = [join(pki.dir, 'live'), join(pki.dir, 'archive')];
  mkdirSync(live);
  mkdirSync(archive);
  writeFileSync(join(archive, 'cert.pem'), pairs.a.cert);
  writeFileSync(join(archive, 'key.pem'), pairs.a.key);
  symlinkSync('../archive/cert.pem', join(live, 'cert.pem'));
  symlinkSync('../archive/key.pem', join(live, 'key.pem'));
  d = await startDaemon({ args: ['--tls-cert', join(live, 'cert.pem'), '--tls-key', join(live, 'key.pem')], ca: pki.ca });
  port = Number(new URL(d.url).port);

  stream = await httpsStream(`${d.url}/admin/sse/topology`, { 'x-api-key': d.adminKey }, pki.ca);
  streamOpenedAt = Date.now();
  const loris = connect({ host: '127.0.0.1', port, ca: pki.ca }, () => loris.write('GET /actuator/health HT'));
  loris.setEncoding('utf8');
  loris.on('data', (c: string) => (slow.text += c));
  loris.on('error', () => {});
  loris.on('close', () => (slow.closed = true));
  target = await startTarget((req, res) => res.end(`target saw ${req.url}`));
  const slot = await agentSlot(d, 'rotation', pki.dir);
  agent = startAgent(d.url, slot.tokenFile, ['--ca-file', pki.caFile]);
  await until(async () => (await d.admin.call(operations.getAgent, { params: { id: slot.id } })).status === 'CONNECTED');
  await d.admin.call(operations.createRoute, {
    body: { name: 'rotation', type: 'HTTP', agentId: slot.id, target: target.url, hostname: 'rotation.test' },
  });
});
afterAll(async () => {
  stream?.close();
  await agent?.stop('SIGKILL');
  await target?.close();
  await d?.stop();
  pki?.cleanup();
});

describe('certificate rotation', () => {
  it('serves the first pair', async () => {
    expect(await served()).toBe(pairs.a.sha256);
  });

  it('SIGHUP: a new connection gets the new pair, the open SSE stream stays up', async () => {
    writeFileSync(join(archive, 'cert.pem'), pairs.b.cert);
    writeFileSync(join(archive, 'key.pem'), pairs.b.key);
    d.proc.kill('SIGHUP');
    await until(reloaded('SIGHUP', pairs.b));
    expect(await served()).toBe(pairs.b.sha256);
    await streamStillLive('after-sighup');
  });

  it('a change on disk: the watch reloads without a signal, even with the key written after the cert', async () => {
    const before = failures().length;
    replace(join(live, 'cert.pem'), pairs.c.cert);
    // The key lands later than the first read of the pair (after a 250 ms quiet time).
    await new Promise((r) => setTimeout(r, 400));
    replace(join(live, 'key.pem'), pairs.c.key);
    await until(reloaded('file change', pairs.c));
    expect(await served()).toBe(pairs.c.sha256);
    expect(failures().length).toBe(before); // the moment with a mismatched pair was waited out, not reported
    await streamStillLive('after-watch');
  });

  it('an invalid new pair is refused and the previous one keeps serving', async () => {
    // A key that belongs to another certificate: refused on SIGHUP at once, and by the watch once settled.
    let seen = failures().length;
    replace(join(live, 'key.pem'), pairs.d.key);
    d.proc.kill('SIGHUP');
    await until(() =>
      failures()
        .slice(seen)
        .some((l) => l.trigger === 'SIGHUP' && /--tls-key .*key\.pem does not match the certificate/.test(String(l.error))),
    );
    await until(() =>
      failures()
        .slice(seen)
        .some((l) => l.trigger === 'file change'),
    );
    expect(await served()).toBe(pairs.c.sha256);

    // Not a certificate at all.
    seen = failures().length;
    replace(join(live, 'cert.pem'), 'not a certificate\n');
    d.proc.kill('SIGHUP');
    await until(() =>
      failures()
        .slice(seen)
        .some((l) => l.trigger === 'SIGHUP' && /--tls-cert .*cert\.pem: not a PEM certificate/.test(String(l.error))),
    );
    expect(await served()).toBe(pairs.c.sha256);

    // Put right again: the watch installs it.
    replace(join(live, 'cert.pem'), pairs.d.cert);
    await until(reloaded('file change', pairs.d));
    expect(await served()).toBe(pairs.d.sha256);
    await streamStillLive('after-refusal');
  });

  it('the agent tunnel opened before every swap is still the same one, past the header deadline; a slow client is not', async () => {
    // Over TLS a connection must not be shed by the 10 s header deadline meant for slow clients.
    const deadline = streamOpenedAt + 11_000;
    await new Promise((r) => setTimeout(r, Math.max(0, deadline - Date.now())));
    const res = await edge(d.edgeUrl, 'rotation.test', 'GET', '/still/here');
    expect(res.status, res.text).toBe(200);
    expect(res.text).toBe('target saw /still/here');
    expect(agent.logs.filter((l) => l.msg === 'tunnel: connected')).toHaveLength(1);
    await streamStillLive('past-deadline');
    // The deadline itself still works over TLS: the slow client got its 408, readable through TLS.
    await until(() => slow.closed);
    expect(slow.text).toMatch(/^HTTP\/1\.1 408 /);
  }, 40_000);
});
