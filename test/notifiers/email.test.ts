import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { makePki, type TestPki } from '../helpers/tls.ts';
import { type SmtpReceiver, startSmtpServer } from './smtp.ts';

/**
 * EMAIL through nodemailer to a real SMTP server (`smtp-server`) on loopback
 * with a self-signed certificate (a throwaway CA made by openssl), STARTTLS
 * and AUTH; the mail it receives is parsed with `mailparser`.
 */
let d: TestDaemon;
let pki: TestPki;
let cert: { cert: string; key: string };
const servers: SmtpReceiver[] = [];
const USER = 'monctl';
const PASS = 'smtp-password-1';

beforeAll(async () => {
  pki = makePki('monctl smtp test CA');
  cert = pki.issue('smtp', 1);
  d = await startDaemon({ args: ['--public-url', 'https://monctl.example.test', '--notifier-timeout', '5s'] });
});
afterAll(async () => {
  await d?.stop();
  await Promise.all(servers.map((s) => s.close()));
  pki?.cleanup();
});

async function smtp(opts: { secure?: boolean; rejectTo?: string } = {}) {
  const server = await startSmtpServer({ ...cert, user: USER, pass: PASS, ...opts });
  servers.push(server);
  return server;
}

let count = 0;
async function emailNotifier(port: number, config: Record<string, unknown>) {
  const body = {
    name: `mail-${++count}`,
    type: 'EMAIL' as const,
    config: {
      host: '127.0.0.1',
      port,
      security: 'STARTTLS' as const,
      username: USER,
      password: PASS,
      from: 'monctl@example.test',
      to: ['ops@example.test', 'oncall@example.test'],
      ...config,
    },
  };
  const n = await d.admin.call(operations.createNotifier, { body });
  return { n, result: await d.admin.call(operations.testNotifier, { params: { id: n.id } }) };
}

describe('EMAIL', () => {
  it('sends over STARTTLS with AUTH to a server whose CA it was given; the mail arrives', async () => {
    const server = await smtp();
    const { result } = await emailNotifier(server.port, { tlsCa: pki.ca });
    expect(result).toMatchObject({ ok: true, statusCode: 250, error: null });
    expect(server.mails).toHaveLength(1);
    const [{ mail, secure, user, envelopeTo }] = server.mails;
    expect({ secure, user, envelopeTo }).toEqual({ secure: true, user: USER, envelopeTo: ['ops@example.test', 'oncall@example.test'] });
    expect(mail.subject).toBe('monctl test notification');
    expect(mail.from?.text).toBe('monctl@example.test');
    expect(mail.messageId).toBe(`<${result.messageId}@monctl>`);
    expect(mail.headers.get('x-monctl-message-id')).toBe(result.messageId);
    expect(mail.text).toMatch(/This is a test message from monctl through notifier "mail-1"/);
    expect(mail.text).toContain('Daemon: https://monctl.example.test/');
  });

  it('sends with skipTlsVerify to the self-signed server', async () => {
    const server = await smtp();
    const { result } = await emailNotifier(server.port, { skipTlsVerify: true });
    expect(result.ok).toBe(true);
    expect(server.mails).toHaveLength(1);
  });

  it('refuses the self-signed server when told to trust neither (retryable: the certificate may be fixed)', async () => {
    const server = await smtp();
    const { result } = await emailNotifier(server.port, {});
    expect(result).toMatchObject({ ok: false, retryable: true });
    expect(result.error).toMatch(/certificate/i);
    expect(server.mails).toEqual([]);
  });

  it('sends over TLS from the first byte', async () => {
    const server = await smtp({ secure: true });
    const { result } = await emailNotifier(server.port, { security: 'TLS', tlsCa: pki.ca });
    expect(result).toMatchObject({ ok: true, statusCode: 250 });
    expect(server.mails[0].secure).toBe(true);
  });

  it('a wrong password is a permanent 535: not retried', async () => {
    const server = await smtp();
    const n = await d.admin.call(operations.createNotifier, {
      body: {
        name: 'mail-wrong',
        type: 'EMAIL',
        config: {
          host: '127.0.0.1',
          port: server.port,
          username: USER,
          password: 'not-the-password',
          from: 'monctl@example.test',
          to: ['ops@example.test'],
          tlsCa: pki.ca,
        },
      },
    });
    const result = await d.admin.call(operations.testNotifier, { params: { id: n.id } });
    expect(result).toMatchObject({ ok: false, statusCode: 535, retryable: false });
    expect(server.authFailures).toBe(1);
    expect(server.mails).toEqual([]);
  });

  it('a rejected recipient is a permanent 550: not retried', async () => {
    const server = await smtp({ rejectTo: 'gone@example.test' });
    const { result } = await emailNotifier(server.port, { tlsCa: pki.ca, to: ['gone@example.test'] });
    expect(result).toMatchObject({ ok: false, statusCode: 550, retryable: false });
  });

  it('a server that is not there: retryable', async () => {
    const server = await smtp();
    const port = server.port;
    await server.close();
    servers.splice(servers.indexOf(server), 1);
    const { result } = await emailNotifier(port, { tlsCa: pki.ca });
    expect(result).toMatchObject({
      ok: false,
      statusCode: null,
      retryable: true,
      error: expect.stringMatching(/ECONNREFUSED|ECONNECTION/),
    });
  });
});
