import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { Resolver } from 'node:dns/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Debian's Knot DNS, authoritative for one zone on 127.0.0.1 (UDP and TCP on
 * one free port), taking RFC 2136 updates signed with a TSIG key
 * (hmac-sha256). `keyFile` holds the key as BIND's clause, the way
 * `keymgr -t` prints it.
 */
export interface Knot {
  host: string;
  port: number;
  keyName: string;
  keyFile: string;
  /** The TXT strings at a name, as the server answers them now ([] when none). */
  txt(name: string): Promise<string[]>;
  logs(): string;
  stop(): Promise<void>;
}

/** A port free for both UDP and TCP on 127.0.0.1 (knot listens on both). */
async function freeDnsPort(): Promise<number> {
  for (;;) {
    const udp = createSocket('udp4');
    const port = await new Promise<number>((resolve) => udp.bind(0, '127.0.0.1', () => resolve(udp.address().port)));
    const tcp = createServer();
    const ok = await new Promise<boolean>((resolve) => {
      tcp.once('error', () => resolve(false));
      tcp.listen(port, '127.0.0.1', () => resolve(true));
    });
    await new Promise<void>((r) => (ok ? tcp.close(() => r()) : r()));
    await new Promise<void>((r) => udp.close(() => r()));
    if (ok) return port;
  }
}

const procs = new Set<ChildProcess>();
process.on('exit', () => {
  for (const p of procs) p.kill('SIGKILL');
});

/** A TXT set at `_acme-challenge.big` whose answer does not fit a 512-byte UDP message: the server sets TC. */
const bigTxt = Array.from({ length: 6 }, (_, i) => `_acme-challenge.big TXT "${String(i).repeat(200)}"`);

export async function startKnot(zone: string): Promise<Knot> {
  const dir = mkdtempSync(join(tmpdir(), 'monctl-knot-'));
  const port = await freeDnsPort();
  const keyName = 'monctl-acme';
  const secret = randomBytes(32).toString('base64');
  const keyFile = join(dir, 'tsig.key');
  writeFileSync(keyFile, `key "${keyName}" {\n\talgorithm hmac-sha256;\n\tsecret "${secret}";\n};\n`);
  writeFileSync(
    join(dir, `${zone}.zone`),
    [
      `$ORIGIN ${zone}.`,
      '$TTL 60',
      `@ SOA ns.${zone}. hostmaster.${zone}. 1 3600 600 86400 60`,
      '@ NS ns',
      'ns A 127.0.0.1',
      '* A 127.0.0.1',
      ...bigTxt,
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(dir, 'knot.conf'),
    [
      'server:',
      `  rundir: "${dir}"`,
      `  listen: 127.0.0.1@${port}`,
      'log:',
      '  - target: stderr',
      '    any: info',
      'database:',
      `  storage: "${dir}"`,
      'key:',
      `  - id: ${keyName}`,
      '    algorithm: hmac-sha256',
      `    secret: ${secret}`,
      'acl:',
      '  - id: acme',
      `    key: ${keyName}`,
      '    action: update',
      'zone:',
      `  - domain: ${zone}`,
      `    storage: "${dir}"`,
      `    file: "${zone}.zone"`,
      // Updates stay in the journal: the zone file is the test's, never rewritten.
      '    zonefile-sync: -1',
      '    journal-content: all',
      '    acl: acme',
      '',
    ].join('\n'),
  );
  let out = '';
  const proc = spawn('knotd', ['-c', join(dir, 'knot.conf')], { stdio: ['ignore', 'pipe', 'pipe'] });
  procs.add(proc);
  proc.stdout!.on('data', (c) => (out += c));
  proc.stderr!.on('data', (c) => (out += c));
  proc.once('exit', () => procs.delete(proc));
  const resolver = new Resolver({ timeout: 1000, tries: 1 });
  resolver.setServers([`127.0.0.1:${port}`]);
  const txt = async (name: string) =>
    resolver.resolveTxt(name).then(
      (records) => records.map((r) => r.join('')),
      (err: NodeJS.ErrnoException) => {
        if (err.code === 'ENODATA' || err.code === 'ENOTFOUND') return [];
        throw err;
      },
    );
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; ; i++) {
      const soa = await resolver.resolveSoa(zone).then(
        () => true,
        () => false,
      );
      if (soa) break;
      if (proc.exitCode !== null || i > 100) throw new Error(`knotd did not start:\n${out}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { host: '127.0.0.1', port, keyName, keyFile, txt, logs: () => out, stop };
}
