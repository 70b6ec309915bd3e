import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCheckConditions } from '../../src/probes/check-conditions.ts';
import type { ProtocolProbeContext } from '../../src/probes/protocol-probe.ts';
import { createProbeRunner } from '../../src/probes/runner.ts';
import { parseSshTarget, probeSsh } from '../../src/probes/ssh-probe.ts';
import { freePort } from '../helpers/free-port.ts';

const ctx = (over: Partial<ProtocolProbeContext> = {}): ProtocolProbeContext => ({
  timeoutMs: 5_000,
  conditions: null,
  report: false,
  skipTLS: false,
  ...over,
});

let dir: string;
let sshd: ChildProcess;
let sshdPort: number;
const fakes: Server[] = [];
const sockets = new Set<Socket>();

/** A TCP server that writes `greeting` to each connection and then waits (or closes, with `end`). */
async function fake(greeting: string | Buffer, end = false): Promise<string> {
  const server = createServer((socket) => {
    sockets.add(socket.on('close', () => sockets.delete(socket)).on('error', () => undefined));
    if (greeting.length > 0) socket.write(greeting);
    if (end) socket.end();
  });
  fakes.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `127.0.0.1:${(server.address() as { port: number }).port}`;
}

/** A private sshd as root on a loopback port, with its own host key and config, no logins at all. */
async function startSshd(): Promise<void> {
  const key = join(dir, 'host_key');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
  sshdPort = await freePort();
  const config = join(dir, 'sshd_config');
  const lines = [`Port ${sshdPort}`, 'ListenAddress 127.0.0.1', `HostKey ${key}`, 'PidFile none', 'AuthenticationMethods publickey'];
  writeFileSync(config, `${lines.concat('AuthorizedKeysFile none', 'UsePAM no', '').join('\n')}`);
  mkdirSync('/run/sshd', { recursive: true }); // the privilege-separation directory Debian's init makes
  sshd = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let log = '';
    sshd.stderr!.on('data', (c: Buffer) => {
      log += c.toString();
      if (log.includes('Server listening')) resolve();
    });
    sshd.once('exit', (code) => reject(new Error(`sshd exited (${code}): ${log}`)));
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'monctl-sshd-'));
  await startSshd();
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  for (const f of fakes) f.close();
  if (sshd && sshd.exitCode === null) {
    const exited = new Promise((resolve) => sshd.once('exit', resolve));
    sshd.kill();
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('SSH checks', () => {
  it('a real sshd: AVAILABLE, the identification string as [BODY], no login', async () => {
    const conditions = parseCheckConditions(['[BODY] == pat(SSH-2.0-OpenSSH*)', '[CONNECTED] == true'], 'SSH');
    const result = await probeSsh(`127.0.0.1:${sshdPort}`, null, ctx({ conditions, report: true }));
    expect(result).toMatchObject({ status: 'AVAILABLE', errorCode: null });
    expect(result.message).toMatch(/^SSH-2\.0-OpenSSH_/);
    expect(result.report?.conditions.every((c) => c.ok)).toBe(true);
    expect(result.timing?.connectMs).not.toBeNull();
  });

  it('through the runner, as the daemon and agents run it', async () => {
    const runner = createProbeRunner({ timeoutMs: 5_000, credential: async () => undefined });
    try {
      const result = await runner.probe({ resourceId: 1, type: 'SSH', target: `127.0.0.1:${sshdPort}`, skipTLS: false, recursive: false });
      expect(result).toMatchObject({ status: 'AVAILABLE', errorCode: null });
    } finally {
      await runner.close();
    }
  });

  it('lines before the identification are allowed (RFC 4253 §4.2); SSH-1.99 is SSH 2', async () => {
    const target = await fake('Welcome to the bastion\r\nAuthorised use only\r\nSSH-1.99-Test_1.0\r\n');
    expect(await probeSsh(target, null, ctx())).toMatchObject({ status: 'AVAILABLE', message: 'SSH-1.99-Test_1.0' });
  });

  it('a server that is not SSH, or SSH 1, is SSH_ERROR; a silent one too, once connected', async () => {
    const http = await fake('HTTP/1.1 400 Bad Request\r\n\r\n', true);
    expect(await probeSsh(http, null, ctx())).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'SSH_ERROR' });
    const old = await fake('SSH-1.5-Old\r\n');
    expect(await probeSsh(old, null, ctx())).toMatchObject({
      status: 'NOT_AVAILABLE',
      errorCode: 'SSH_ERROR',
      message: 'not SSH 2: SSH-1.5-Old',
    });
    const silent = await fake('');
    const quiet = await probeSsh(silent, null, ctx({ timeoutMs: 300 }));
    expect(quiet).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'SSH_ERROR' });
    expect(quiet.message).toMatch(/no identification string within 300 ms/);
  });

  it('reads a bounded amount: a long line or too many lines is SSH_ERROR without waiting for more', async () => {
    const long = await fake(Buffer.alloc(64 * 1024, 'a'));
    const tooLong = await probeSsh(long, null, ctx());
    expect(tooLong).toMatchObject({ errorCode: 'SSH_ERROR' });
    expect(tooLong.message).toMatch(/longer than 255 bytes/);
    const chatty = await fake('hello\n'.repeat(100));
    expect((await probeSsh(chatty, null, ctx())).message).toMatch(/10 lines without an identification string/);
  });

  it('a port nobody listens on is CONNECTION_ERROR; targets take host, host:port and [v6]', async () => {
    const refused = await probeSsh(`127.0.0.1:${await freePort()}`, null, ctx());
    expect(refused).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONNECTION_ERROR' });
    expect(parseSshTarget('host.example')).toEqual({ host: 'host.example', port: 22 });
    expect(parseSshTarget('host.example:2222')).toEqual({ host: 'host.example', port: 2222 });
    expect(parseSshTarget('[::1]')).toEqual({ host: '::1', port: 22 });
    expect(parseSshTarget('[::1]:2222')).toEqual({ host: '::1', port: 2222 });
    expect(parseSshTarget('a b')).toBeUndefined();
  });
});
