import { chownSync, statSync, writeFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { createSecureContext, getCACertificates, type SecureContext, setDefaultCACertificates, TLSSocket } from 'node:tls';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PgCluster, startPgCluster } from '../helpers/postgres.ts';
import { makePki, type TestPki } from '../helpers/tls.ts';
import { plainServer, type Target, tlsChecker } from './helpers/tls-targets.ts';

/**
 * STARTTLS against real servers where the suite has them (the `smtp-server` package, a
 * PostgreSQL cluster of this file's own with ssl switched on) and small node servers speaking
 * the IMAP, POP3, FTP and LDAP exchanges; then servers that refuse, stall or misbehave.
 */
let pki: TestPki;
let context: SecureContext;
let cert: { cert: string; key: string; certFile: string; keyFile: string };
const targets: Target[] = [];
const smtpServers: SMTPServer[] = [];
let cluster: PgCluster | undefined;
const checker = tlsChecker(2_000);
const check = checker.check;

beforeAll(() => {
  pki = makePki('monctl starttls CA');
  setDefaultCACertificates([...getCACertificates('default'), pki.ca]);
  cert = pki.issue('mail', 1, 2);
  context = createSecureContext({ cert: cert.cert, key: cert.key });
});

afterAll(async () => {
  await checker.runner.close();
  await Promise.all(targets.map((t) => t.close()));
  await Promise.all(smtpServers.map((s) => new Promise<void>((r) => s.close(() => r()))));
  await cluster?.stop();
  pki?.cleanup();
});

/** Hands a plain socket to TLS, server side, as a STARTTLS server does after its "go ahead". */
function upgrade(socket: Socket): void {
  socket.removeAllListeners('data');
  const secure = new TLSSocket(socket, { isServer: true, secureContext: context });
  secure.on('error', () => undefined);
  secure.once('secure', () => secure.end());
}

/**
 * A line-based server: `greeting` on connect, then each line received looked up in `answers`;
 * the answer to `upgradeOn` is followed by the TLS handshake. Unknown lines close the connection.
 */
async function lineServer(greeting: string, answers: Record<string, string>, upgradeOn: string | null): Promise<string> {
  const target = await plainServer((socket) => {
    socket.write(greeting);
    let buffer = '';
    socket.on('data', (chunk) => {
      buffer += chunk.toString('latin1');
      for (let end = buffer.indexOf('\r\n'); end >= 0; end = buffer.indexOf('\r\n')) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const answer = answers[line];
        if (answer === undefined) return void socket.end();
        socket.write(answer);
        if (line === upgradeOn) return upgrade(socket);
      }
    });
  });
  targets.push(target);
  return `127.0.0.1:${target.port}`;
}

async function smtpServer(opts: { disabledCommands?: string[] }): Promise<string> {
  const server = new SMTPServer({ key: cert.key, cert: cert.cert, logger: false, authOptional: true, ...opts });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  smtpServers.push(server);
  return `127.0.0.1:${(server.server.address() as { port: number }).port}`;
}

describe('STARTTLS', () => {
  it('smtp against a real SMTP server: AVAILABLE with the certificate; a server without STARTTLS is TLS_ERROR quoting its answer', async () => {
    const ok = await check(await smtpServer({}), { starttls: 'smtp' });
    expect(ok).toMatchObject({ status: 'AVAILABLE', errorCode: null });
    expect(ok.certNotAfter).toBeTypeOf('number');
    expect(ok.timing?.tlsMs).toBeTypeOf('number');
    const refused = await check(await smtpServer({ disabledCommands: ['STARTTLS'] }), { starttls: 'smtp' });
    expect(refused).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'TLS_ERROR' });
    expect(refused.message).toMatch(/^SMTP STARTTLS refused: "5\d\d /);
  });

  it('postgres against a real PostgreSQL: N while ssl is off (TLS_ERROR), AVAILABLE once ssl is on', async () => {
    cluster = await startPgCluster();
    const target = `127.0.0.1:${cluster.port}`;
    const off = await check(target, { starttls: 'postgres' });
    expect(off).toMatchObject({
      status: 'NOT_AVAILABLE',
      errorCode: 'TLS_ERROR',
      message: 'PostgreSQL refused SSL (N: ssl is off on the server)',
    });
    // The server runs as the cluster directory's owner and wants its key readable by it alone.
    const { uid, gid } = statSync(cluster.dir);
    for (const [name, text] of [
      ['server.crt', cert.cert],
      ['server.key', cert.key],
    ]) {
      writeFileSync(join(cluster.dir, name), text, { mode: 0o600 });
      chownSync(join(cluster.dir, name), uid, gid);
    }
    await cluster.admin(`ALTER SYSTEM SET ssl_cert_file = '${join(cluster.dir, 'server.crt')}'`);
    await cluster.admin(`ALTER SYSTEM SET ssl_key_file = '${join(cluster.dir, 'server.key')}'`);
    await cluster.admin('ALTER SYSTEM SET ssl = on');
    await cluster.admin('SELECT pg_reload_conf()');
    // The reload is asynchronous: wait until new sessions see it.
    for (let i = 0; i < 100 && (await cluster.admin<{ ssl: string }>('SHOW ssl'))[0].ssl !== 'on'; i++)
      await new Promise((r) => setTimeout(r, 50));
    const on = await check(
      target,
      { starttls: 'postgres' },
      { conditions: ['[TLS_VERSION] == TLSv1.3', '[CERTIFICATE_EXPIRATION] < 72h'] },
    );
    expect(on).toMatchObject({ status: 'AVAILABLE', errorCode: null });
  });

  it('imap: a tagged STARTTLS answered OK after untagged lines; BAD is TLS_ERROR', async () => {
    const ok = await lineServer(
      '* OK [CAPABILITY IMAP4rev1 STARTTLS] ready\r\n',
      { 'm1 STARTTLS': '* NOTE untagged first\r\nm1 OK Begin TLS negotiation now\r\n' },
      'm1 STARTTLS',
    );
    expect(await check(ok, { starttls: 'imap' })).toMatchObject({ status: 'AVAILABLE' });
    const bad = await lineServer('* OK ready\r\n', { 'm1 STARTTLS': 'm1 BAD STARTTLS not here\r\n' }, null);
    expect(await check(bad, { starttls: 'imap' })).toMatchObject({
      errorCode: 'TLS_ERROR',
      message: 'IMAP STARTTLS refused: "m1 BAD STARTTLS not here"',
    });
    const bye = await lineServer('* BYE too busy\r\n', {}, null);
    expect(await check(bye, { starttls: 'imap' })).toMatchObject({ errorCode: 'TLS_ERROR', message: 'IMAP greeting: "* BYE too busy"' });
  });

  it('pop3: STLS answered +OK; -ERR is TLS_ERROR', async () => {
    const ok = await lineServer('+OK POP3 ready\r\n', { STLS: '+OK Begin TLS\r\n' }, 'STLS');
    expect(await check(ok, { starttls: 'pop3' })).toMatchObject({ status: 'AVAILABLE' });
    const refused = await lineServer('+OK POP3 ready\r\n', { STLS: '-ERR no TLS\r\n' }, null);
    expect(await check(refused, { starttls: 'pop3' })).toMatchObject({
      errorCode: 'TLS_ERROR',
      message: 'POP3 STLS refused: "-ERR no TLS"',
    });
  });

  it('ftp: a multi-line greeting, AUTH TLS answered 234; 530 is TLS_ERROR', async () => {
    const ok = await lineServer('220-Welcome\r\n220-to the test\r\n220 ready\r\n', { 'AUTH TLS': '234 AUTH TLS ok\r\n' }, 'AUTH TLS');
    expect(await check(ok, { starttls: 'ftp' })).toMatchObject({ status: 'AVAILABLE' });
    const refused = await lineServer('220 ready\r\n', { 'AUTH TLS': '530 Please login with USER and PASS\r\n' }, null);
    expect(await check(refused, { starttls: 'ftp' })).toMatchObject({
      errorCode: 'TLS_ERROR',
      message: 'FTP AUTH TLS refused: "530 Please login with USER and PASS"',
    });
  });

  it('ldap: the StartTLS extended request in BER, answered success; another result code is TLS_ERROR with its diagnostic', async () => {
    const requests: Buffer[] = [];
    // RFC 4511 4.14.1: messageID 1, [APPLICATION 23] { [0] "1.3.6.1.4.1.1466.20037" }, written out by hand.
    const expected = Buffer.concat([Buffer.from('301d020101771880 16'.replace(/ /g, ''), 'hex'), Buffer.from('1.3.6.1.4.1.1466.20037')]);
    const server = (resultCode: number, diagnostic: string) =>
      plainServer((socket) => {
        socket.once('data', (request) => {
          requests.push(request);
          const diag = Buffer.from(diagnostic);
          const response = Buffer.concat([Buffer.from([0x0a, 1, resultCode, 0x04, 0, 0x04, diag.length]), diag]);
          socket.write(Buffer.concat([Buffer.from([0x30, response.length + 5, 0x02, 1, 1, 0x78, response.length]), response]));
          if (resultCode === 0) upgrade(socket);
        });
      });
    const ok = await server(0, '');
    const refused = await server(2, 'unsupported extended operation');
    targets.push(ok, refused);
    expect(await check(`127.0.0.1:${ok.port}`, { starttls: 'ldap' })).toMatchObject({ status: 'AVAILABLE' });
    expect(requests[0].equals(expected)).toBe(true);
    expect(await check(`127.0.0.1:${refused.port}`, { starttls: 'ldap' })).toMatchObject({
      errorCode: 'TLS_ERROR',
      message: 'LDAP StartTLS refused: result 2 "unsupported extended operation"',
    });
  });
});

describe('STARTTLS against a hostile or broken server', () => {
  it('bytes sent after the "go ahead" are refused, not read as TLS (the STARTTLS injection flaw)', async () => {
    const injecting = await lineServer(
      '220 ready\r\n',
      { 'EHLO monctl.invalid': '250 hi\r\n', STARTTLS: '220 go ahead\r\n250 injected\r\n' },
      null,
    );
    expect(await check(injecting, { starttls: 'smtp' })).toMatchObject({
      errorCode: 'TLS_ERROR',
      message: 'the server sent data after accepting STARTTLS',
    });
  });

  it('a line past 4,096 bytes, an answer past 64 lines and control characters are bounded and escaped', async () => {
    const long = await lineServer(`220 ${'x'.repeat(10_000)}`, {}, null);
    expect((await check(long, { starttls: 'smtp' })).message).toBe('the server sent a line longer than 4096 bytes during STARTTLS');
    const endless = await lineServer('220-more\r\n'.repeat(100), {}, null);
    expect((await check(endless, { starttls: 'ftp' })).message).toBe("the server's reply went past 64 lines");
    const hostile = await lineServer(`554 \u001b[31mno\u0000 ${'y'.repeat(300)}\r\n`, {}, null);
    const r = await check(hostile, { starttls: 'smtp' });
    expect(r.errorCode).toBe('TLS_ERROR');
    expect(r.message).toMatch(/^SMTP greeting: "554 \\u001b\[31mno\\u0000 y+…"$/);
    expect(r.message.length).toBeLessThan(200);
  });

  it('a server that never greets is TLS_ERROR at the check timeout; one that closes mid-dialogue says so', async () => {
    const silent = await plainServer(() => undefined);
    const closing = await plainServer((socket) => socket.end('+OK ready\r\n'));
    targets.push(silent, closing);
    expect(await check(`127.0.0.1:${silent.port}`, { starttls: 'imap' })).toMatchObject({
      errorCode: 'TLS_ERROR',
      message: 'STARTTLS (imap) failed: timeout after 2000 ms',
    });
    expect(await check(`127.0.0.1:${closing.port}`, { starttls: 'pop3' })).toMatchObject({
      errorCode: 'TLS_ERROR',
      message: 'the server closed the connection during STARTTLS',
    });
  });
});
