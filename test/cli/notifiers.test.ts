import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type Receiver, startReceiver, startSlackReceiver, startWebhookReceiver } from '../notifiers/receivers.ts';
import { type RunResult, useAdminCli } from './run.ts';

/**
 * `monctl notifiers` through the real CLI against a real daemon and real
 * receivers: secrets piped on stdin (never flags), the signing secret printed
 * once, `test` exiting 1 on a failed delivery, update keeping or replacing
 * secrets, deliveries, rm, rotate-secret.
 */
const cli = useAdminCli();
const receivers: Receiver[] = [];
const outputs: RunResult[] = [];
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
});

async function monctl(args: string[], input?: string): Promise<RunResult> {
  const res = await cli.monctl(args, { input });
  outputs.push(res);
  return res;
}
const keep = <R extends Receiver>(r: R) => (receivers.push(r), r);
const HEADER_SECRET = 'Bearer cli-header-secret-1';
const NTFY_TOKEN = 'tk_cli-ntfy-token-1';
const NTFY_TOKEN_2 = 'tk_cli-ntfy-token-2';

describe('monctl notifiers', () => {
  it('add WEBHOOK: a header value from stdin, the signing secret alone on stdout with a warning; test delivers', async () => {
    let secret = '';
    const receiver = keep(await startWebhookReceiver(() => secret));
    const add = await monctl(
      ['notifiers', 'add', 'hook', '--type', 'webhook', '--url', `${receiver.url}/in`, '--header', 'Authorization'],
      `${HEADER_SECRET}\n`,
    );
    expect(add.code, add.stderr).toBe(0);
    secret = add.stdout.trim();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(add.stderr).toMatch(/Created notifier hook .*not shown again/s);
    const test = await monctl(['notifiers', 'test', 'hook']);
    expect(test.code, test.stderr).toBe(0);
    expect(test.stdout).toMatch(/^Delivered a test message to hook \(status 204, \d+ ms\)\.\n$/);
    expect(receiver.verified).toHaveLength(1);
    expect(receiver.received[0].headers.authorization).toBe(HEADER_SECRET);
  });

  it('add SLACK: the URL is piped in; --url is refused for it', async () => {
    const receiver = keep(await startSlackReceiver('/services/T/B/x'));
    const refused = await monctl(['notifiers', 'add', 'chat', '--type', 'SLACK', '--url', `${receiver.url}/services/T/B/x`]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/secret: pipe it in/);
    const add = await monctl(['notifiers', 'add', 'chat', '--type', 'SLACK'], `${receiver.url}/services/T/B/x\n`);
    expect(add.code, add.stderr).toBe(0);
    expect(add.stdout).toMatch(/^Created notifier chat \(id \d+, SLACK\)\.\n$/);
    expect((await monctl(['notifiers', 'test', 'chat'])).code).toBe(0);
    expect(receiver.texts).toHaveLength(1);
  });

  it('add NTFY --with-token from stdin; update replaces the token (stdin) and the priority, keeps it otherwise', async () => {
    let token = NTFY_TOKEN;
    // An ntfy server whose token is changed under it: 403 until the notifier has the new one.
    const ntfy = keep(await startReceiver((r) => (r.headers.authorization === `Bearer ${token}` ? { status: 200 } : { status: 403 })));
    const add = await monctl(
      ['notifiers', 'add', 'phone', '--type', 'NTFY', '--url', ntfy.url, '--topic', 'alerts', '--priority', 'high', '--with-token'],
      `${NTFY_TOKEN}\n`,
    );
    expect(add.code, add.stderr).toBe(0);
    expect((await monctl(['notifiers', 'test', 'phone'])).code).toBe(0);
    const kept = await monctl(['notifiers', 'update', 'phone', '--priority', 'max', '--disable']);
    expect(kept.code, kept.stderr).toBe(0);
    expect((await monctl(['notifiers', 'test', 'phone'])).code).toBe(0);
    token = NTFY_TOKEN_2;
    expect((await monctl(['notifiers', 'test', 'phone'])).code).toBe(1);
    const replaced = await monctl(['notifiers', 'update', 'phone', '--with-token'], `${NTFY_TOKEN_2}\n`);
    expect(replaced.code, replaced.stderr).toBe(0);
    expect((await monctl(['notifiers', 'test', 'phone'])).code).toBe(0);
    const got = (await monctl(['notifiers', 'get', 'phone', '-o', 'json'])).json();
    expect(got).toMatchObject({ enabled: false, config: { priority: 5, topic: 'alerts' }, secrets: { token: true } });
  });

  it('a new server without the token again is refused, naming the field', async () => {
    const moved = await monctl(['notifiers', 'update', 'phone', '--url', 'https://ntfy.elsewhere.test']);
    expect(moved.code).toBe(1);
    expect(moved.stderr).toMatch(/config\.token: give it again/);
  });

  it('add EMAIL: --username reads the password from stdin; get shows that it is set, never the value', async () => {
    const add = await monctl(
      [
        'notifiers',
        'add',
        'mail',
        '--type',
        'EMAIL',
        '--host',
        'smtp.example.test',
        '--security',
        'tls',
        '--username',
        'monctl',
        '--from',
        'monctl@example.test',
        '--to',
        'a@example.test,b@example.test',
        '-o',
        'json',
      ],
      'cli-smtp-password-1\n',
    );
    expect(add.code, add.stderr).toBe(0);
    expect(add.json()).toMatchObject({
      config: { port: 465, security: 'TLS', to: ['a@example.test', 'b@example.test'] },
      secrets: { password: true },
    });
    const missing = await monctl([
      'notifiers',
      'add',
      'mail2',
      '--type',
      'EMAIL',
      '--host',
      'h',
      '--username',
      'u',
      '--from',
      'a@b.test',
      '--to',
      'c@d.test',
    ]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/SMTP password is missing/);
  });

  it('test exits 1 when the delivery failed, saying why', async () => {
    const failing = keep(await startReceiver(() => ({ status: 500, body: 'boom' })));
    expect((await monctl(['notifiers', 'add', 'broken', '--type', 'SLACK'], `${failing.url}/x\n`)).code).toBe(0);
    const test = await monctl(['notifiers', 'test', 'broken']);
    expect(test.code).toBe(1);
    expect(test.stderr).toMatch(/not delivered: HTTP 500: boom .*would be retried/);
    const json = await monctl(['notifiers', 'test', 'broken', '-o', 'json']);
    expect(json.code).toBe(1);
    expect(json.json()).toMatchObject({ ok: false, statusCode: 500, retryable: true });
  });

  it('list and deliveries', async () => {
    const list = await monctl(['notifiers', 'list']);
    expect(list.code).toBe(0);
    const rows = list.stdout
      .trimEnd()
      .split('\n')
      .map((l) => l.split('\t'));
    expect(rows[0]).toEqual(['ID', 'NAME', 'TYPE', 'ENABLED', 'DESTINATION', 'SECRETS SET']);
    expect(rows.slice(1).map((r) => r[1])).toEqual(['hook', 'chat', 'phone', 'mail', 'broken']);
    expect(rows.find((r) => r[1] === 'hook')![5]).toBe('signingSecret,header:Authorization');
    const deliveries = await monctl(['notifiers', 'deliveries', 'broken']);
    expect(deliveries.code).toBe(0);
    const lines = deliveries.stdout
      .trimEnd()
      .split('\n')
      .map((l) => l.split('\t'));
    expect(lines[0]).toEqual(['ID', 'AT', 'RESULT', 'STATUS', 'MS', 'ATTEMPT', 'NOTIFICATION', 'ERROR']);
    expect(lines.slice(1).map((l) => [l[2], l[3], l[6], l[7]])).toEqual([
      ['FAILED', '500', 'test', 'HTTP 500: boom'],
      ['FAILED', '500', 'test', 'HTTP 500: boom'],
    ]);
  });

  it('rotate-secret writes the new secret to a 0600 file', async () => {
    const file = join(cli.home.dir, 'hook.secret');
    const res = await monctl(['notifiers', 'rotate-secret', 'hook', '--yes', '--output-file', file]);
    expect(res.code, res.stderr).toBe(0);
    expect(readFileSync(file, 'utf8')).toMatch(/^whsec_/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(res.stdout).toBe('');
  });

  it('rm needs --yes in a script, then the notifier is gone (exit 3)', async () => {
    expect((await monctl(['notifiers', 'rm', 'chat'])).code).toBe(2);
    expect((await monctl(['notifiers', 'rm', 'chat', '--yes'])).code).toBe(0);
    expect((await monctl(['notifiers', 'get', 'chat'])).code).toBe(3);
  });

  it('no output but the one-time display carried a secret', () => {
    const shown = outputs.filter((o) => /whsec_/.test(o.stdout) && !/"secrets"/.test(o.stdout));
    expect(shown.length).toBe(1); // add hook, on its own
    const rest = outputs
      .filter((o) => !shown.includes(o))
      .map((o) => o.stdout + o.stderr)
      .join('\n');
    for (const secret of [HEADER_SECRET, NTFY_TOKEN, NTFY_TOKEN_2, 'cli-smtp-password-1', '/services/T/B/x'])
      expect(rest.includes(secret), secret).toBe(false);
    expect(rest).not.toMatch(/whsec_/);
  });
});
