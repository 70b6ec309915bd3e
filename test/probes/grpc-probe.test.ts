import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createTcpServer, connect, type Server as TcpServer, type Socket } from 'node:net';
import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGrpcProber } from '../../src/probes/grpc-probe.ts';
import { decodeHealthResponse, encodeHealthRequest } from '../../src/probes/grpc-health.ts';
import { parseCheckConditions } from '../../src/probes/check-conditions.ts';
import type { ProtocolProbeContext } from '../../src/probes/protocol-probe.ts';
import { createProbeRunner } from '../../src/probes/runner.ts';
import type { GrpcOptions } from '../../src/probes/types.ts';
import { ROOT } from '../helpers/daemon.ts';
import { freePort } from '../helpers/free-port.ts';
import { makePki, type TestPki } from '../helpers/tls.ts';

const TIMEOUT = 5_000;
const health = new HealthImplementation({ '': 'SERVING', 'shop.Cart': 'SERVING' });
const servers: grpc.Server[] = [];
let pki: TestPki;
let plain: string;
let bare: string;
let tlsGood: string;
let tlsWrongName: string;
const defaultCAs = getCACertificates('default');

async function serve(creds: grpc.ServerCredentials, withHealth = true): Promise<string> {
  const server = new grpc.Server();
  if (withHealth) health.addToServer(server);
  servers.push(server);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', creds, (err, p) => (err ? reject(err) : resolve(p))),
  );
  return `127.0.0.1:${port}`;
}

const ctx = (over: Partial<ProtocolProbeContext> = {}): ProtocolProbeContext => ({
  timeoutMs: TIMEOUT,
  conditions: null,
  report: false,
  skipTLS: false,
  ...over,
});
const opts = (over: Partial<GrpcOptions> = {}): GrpcOptions => ({ service: '', tls: false, ...over });

beforeAll(async () => {
  pki = makePki('monctl grpc test CA');
  const good = pki.issue('grpc-good', 1);
  const wrong = pki.issueNames('grpc-wrong', 2, ['other.example']);
  const tlsCreds = (c: { cert: string; key: string }) =>
    grpc.ServerCredentials.createSsl(null, [{ cert_chain: Buffer.from(c.cert), private_key: Buffer.from(c.key) }], false);
  [plain, bare, tlsGood, tlsWrongName] = await Promise.all([
    serve(grpc.ServerCredentials.createInsecure()),
    serve(grpc.ServerCredentials.createInsecure(), false),
    serve(tlsCreds(good)),
    serve(tlsCreds(wrong)),
  ]);
  // The verified case trusts the test CA the way a host trusts its own (NODE_EXTRA_CA_CERTS, --ca-file).
  setDefaultCACertificates([...defaultCAs, pki.ca]);
});

afterAll(() => {
  setDefaultCACertificates(defaultCAs);
  for (const s of servers) s.forceShutdown();
  pki?.cleanup();
});

describe('GRPC health messages by hand', () => {
  it('encodes the request and decodes every status, skipping unknown fields', () => {
    expect(encodeHealthRequest('')).toEqual(Buffer.alloc(0));
    expect(encodeHealthRequest('a.B')).toEqual(Buffer.from([0x0a, 3, 0x61, 0x2e, 0x42]));
    expect(decodeHealthResponse(Buffer.alloc(0))).toBe('UNKNOWN');
    expect(decodeHealthResponse(Buffer.from([0x08, 1]))).toBe('SERVING');
    expect(decodeHealthResponse(Buffer.from([0x08, 2]))).toBe('NOT_SERVING');
    expect(decodeHealthResponse(Buffer.from([0x08, 3]))).toBe('SERVICE_UNKNOWN');
    // field 2 (a string) before field 1: skipped
    expect(decodeHealthResponse(Buffer.from([0x12, 2, 0x41, 0x42, 0x08, 1]))).toBe('SERVING');
    expect(() => decodeHealthResponse(Buffer.from([0x12, 9, 0x41]))).toThrow(/truncated/);
  });
});

describe('GRPC checks against grpc-js servers with the standard health service', () => {
  it('SERVING is AVAILABLE; NOT_SERVING is GRPC_ERROR with the status; back to SERVING', async () => {
    const prober = createGrpcProber();
    try {
      expect(await prober.probe(plain, opts(), ctx())).toMatchObject({ status: 'AVAILABLE', errorCode: null });
      health.setStatus('shop.Cart', 'NOT_SERVING');
      expect(await prober.probe(plain, opts({ service: 'shop.Cart' }), ctx())).toMatchObject({
        status: 'NOT_AVAILABLE',
        errorCode: 'GRPC_ERROR',
        message: 'NOT_SERVING',
      });
      // A condition on [BODY] decides: a service expected to be down is up when it is.
      const conditions = parseCheckConditions(['[BODY] == NOT_SERVING'], 'GRPC');
      expect(await prober.probe(plain, opts({ service: 'shop.Cart' }), ctx({ conditions }))).toMatchObject({ status: 'AVAILABLE' });
      health.setStatus('shop.Cart', 'SERVING');
      expect(await prober.probe(plain, opts({ service: 'shop.Cart' }), ctx())).toMatchObject({ status: 'AVAILABLE' });
    } finally {
      await prober.close();
    }
  });

  it('an unknown service is NOT_FOUND and a server without the health service UNIMPLEMENTED, both GRPC_ERROR', async () => {
    const prober = createGrpcProber();
    try {
      const unknown = await prober.probe(plain, opts({ service: 'no.Such' }), ctx({ report: true }));
      expect(unknown).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'GRPC_ERROR' });
      expect(unknown.message).toMatch(/^NOT_FOUND: the health service does not know this service/);
      const none = await prober.probe(bare, opts(), ctx());
      expect(none).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'GRPC_ERROR' });
      expect(none.message).toMatch(/^UNIMPLEMENTED: the server has no health service/);
    } finally {
      await prober.close();
    }
  });

  it('a port nobody listens on is CONNECTION_ERROR, and [CONNECTED] false in a report', async () => {
    const prober = createGrpcProber();
    try {
      const conditions = parseCheckConditions(['[CONNECTED] == true'], 'GRPC');
      const down = await prober.probe(`127.0.0.1:${await freePort()}`, opts(), ctx({ conditions, report: true }));
      expect(down).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONNECTION_ERROR' });
      expect(down.message).toMatch(/ECONNREFUSED/);
      expect(down.report?.conditions).toEqual([{ condition: '[CONNECTED] == true', ok: false, message: '[CONNECTED] (false) == true' }]);
    } finally {
      await prober.close();
    }
  });

  it('a server that accepts and never speaks HTTP/2 is CONNECTION_ERROR at the check’s timeout', async () => {
    const silent = createTcpServer((s) => s.resume());
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const prober = createGrpcProber();
    try {
      const target = `127.0.0.1:${(silent.address() as { port: number }).port}`;
      expect(await prober.probe(target, opts(), ctx({ timeoutMs: 300 }))).toMatchObject({
        status: 'NOT_AVAILABLE',
        errorCode: 'CONNECTION_ERROR',
        message: 'timeout after 300 ms',
      });
    } finally {
      await prober.close();
      silent.close();
    }
  });

  it('TLS: a trusted certificate passes with its expiry seen; the wrong name is TLS_ERROR; skipTLS passes it', async () => {
    const prober = createGrpcProber();
    try {
      const conditions = parseCheckConditions(['[CERTIFICATE_EXPIRATION] > 1h'], 'GRPC');
      const good = await prober.probe(tlsGood, opts({ tls: true }), ctx({ conditions }));
      expect(good).toMatchObject({ status: 'AVAILABLE', errorCode: null });
      expect(good.certNotAfter).toBeGreaterThan(Date.now());
      const wrong = await prober.probe(tlsWrongName, opts({ tls: true }), ctx());
      expect(wrong).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'TLS_ERROR' });
      expect(wrong.message).toMatch(/altnames|certificate/i);
      const skipped = await prober.probe(tlsWrongName, opts({ tls: true }), ctx({ skipTLS: true }));
      expect(skipped).toMatchObject({ status: 'AVAILABLE' });
      // TLS to a plaintext server fails in the handshake.
      expect(await prober.probe(plain, opts({ tls: true }), ctx())).toMatchObject({ errorCode: 'TLS_ERROR' });
    } finally {
      await prober.close();
    }
  });
});

/** A TCP relay in front of a server: counts the connections made through it and which are open. */
async function relay(to: string): Promise<{ target: string; open: Set<Socket>; opened: () => number; close: () => void }> {
  const [host, port] = to.split(':');
  const open = new Set<Socket>();
  let opened = 0;
  const server: TcpServer = createTcpServer((socket) => {
    opened++;
    open.add(socket);
    const upstream = connect(Number(port), host);
    socket.pipe(upstream).pipe(socket);
    const drop = () => {
      open.delete(socket);
      socket.destroy();
      upstream.destroy();
    };
    socket.on('close', drop).on('error', drop);
    upstream.on('close', drop).on('error', drop);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    target: `127.0.0.1:${(server.address() as { port: number }).port}`,
    open,
    opened: () => opened,
    close: () => {
      for (const s of open) s.destroy();
      server.close();
    },
  };
}

const closed = (sockets: Set<Socket>) =>
  Promise.all([...sockets].map((s) => new Promise<void>((resolve) => (s.destroyed ? resolve() : s.once('close', () => resolve())))));

describe('GRPC channels', () => {
  it('one connection per target across checks; the runner close() closes it', async () => {
    const front = await relay(plain);
    const runner = createProbeRunner({ timeoutMs: TIMEOUT, credential: async () => undefined });
    try {
      const input = { resourceId: 1, type: 'GRPC' as const, target: front.target, skipTLS: false, recursive: false, options: opts() };
      for (let i = 0; i < 3; i++) expect(await runner.probe(input)).toMatchObject({ status: 'AVAILABLE' });
      expect(front.opened()).toBe(1);
      const open = new Set(front.open);
      expect(open.size).toBe(1);
      await runner.close();
      await closed(open);
      expect(front.open.size).toBe(0);
    } finally {
      front.close();
    }
  });

  it('a target that was down is checked afresh: up again, the next check sees it at once', async () => {
    const port = await freePort();
    const prober = createGrpcProber();
    const later = new grpc.Server();
    try {
      expect(await prober.probe(`127.0.0.1:${port}`, opts(), ctx())).toMatchObject({ errorCode: 'CONNECTION_ERROR' });
      health.addToServer(later);
      await new Promise<void>((resolve, reject) =>
        later.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
      );
      expect(await prober.probe(`127.0.0.1:${port}`, opts(), ctx())).toMatchObject({ status: 'AVAILABLE' });
    } finally {
      await prober.close();
      later.forceShutdown();
    }
  });

  it('past the cap, the least recently checked target’s channel is closed', async () => {
    const [a, b] = await Promise.all([relay(plain), relay(plain)]);
    const prober = createGrpcProber(1);
    try {
      expect(await prober.probe(a.target, opts(), ctx())).toMatchObject({ status: 'AVAILABLE' });
      const first = new Set(a.open);
      expect(first.size).toBe(1);
      expect(await prober.probe(b.target, opts(), ctx())).toMatchObject({ status: 'AVAILABLE' });
      await closed(first);
      expect(a.open.size).toBe(0);
      expect(b.open.size).toBe(1);
    } finally {
      await prober.close();
      a.close();
      b.close();
    }
  });
});

describe('grpc-js loads only when a GRPC check runs', () => {
  const loaded = "Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes('@grpc/grpc-js'))";
  it('the probe runner (daemon and agent) does not load it until the first GRPC check', () => {
    const code = `
      import { createRequire } from 'node:module';
      const { createProbeRunner } = await import('./src/probes/runner.ts');
      const runner = createProbeRunner({ timeoutMs: 2000, credential: async () => undefined });
      await runner.probe({ resourceId: 1, type: 'TCP', target: '127.0.0.1:1', skipTLS: false, recursive: false });
      const before = ${loaded};
      await runner.probe({ resourceId: 1, type: 'GRPC', target: '127.0.0.1:1', skipTLS: false, recursive: false, options: { service: '', tls: false } });
      console.log(JSON.stringify({ before, after: ${loaded} }));
      await runner.close();`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', code], { cwd: ROOT, encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual({ before: false, after: true });
  });

  it('`monctl --version` does not load it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'monctl-grpc-load-'));
    try {
      const hook = join(dir, 'hook.mjs');
      writeFileSync(
        hook,
        `import { createRequire } from 'node:module';\nprocess.on('exit', () => process.stderr.write('grpc loaded: ' + ${loaded}));\n`,
      );
      const run = spawnSync(join(ROOT, 'bin/monctl'), ['--version'], {
        encoding: 'utf8',
        env: { ...process.env, NODE_OPTIONS: `--import ${hook}` },
      });
      expect(run.status).toBe(0);
      expect(run.stderr).toContain('grpc loaded: false');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
