import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { bearer, expectProblem, fieldsOf, send, sendJson } from '../helpers/http.ts';
import { databaseBytes } from '../helpers/test-database.ts';

/**
 * `/admin/api/notifiers` over HTTP: CRUD, validation naming the field, unique
 * names, secrets write-only (no read returns them, the database holds them
 * sealed), updates that keep a secret unless the destination changes, the
 * signing secret shown once, and the deliveries log paged like history.
 */
let d: TestDaemon;
const responses: string[] = [];
const SECRETS = {
  header: 'header-value-that-must-not-leak-1',
  slack: 'https://hooks.example.test/services/T000/B000/slack-token-that-must-not-leak',
  ntfy: 'tk_ntfy-token-that-must-not-leak',
  smtp: 'smtp-password-that-must-not-leak',
  ntfy2: 'tk_second-ntfy-token-that-must-not-leak',
};

async function call(method: string, path: string, body?: unknown) {
  const res = await sendJson(d.url, method, path, body, bearer(d.adminKey));
  responses.push(res.text);
  return res;
}

beforeAll(async () => {
  d = await startDaemon({ env: { MONCTL_LOG_LEVEL: 'debug' } });
});
afterAll(async () => {
  await d?.stop();
});

const webhook = {
  name: 'hook',
  type: 'WEBHOOK',
  config: { url: 'http://127.0.0.1:9/hook', headers: { Authorization: `Bearer ${SECRETS.header}` } },
};
const slack = { name: 'chat', type: 'SLACK', config: { url: SECRETS.slack } };
const ntfy = {
  name: 'phone',
  type: 'NTFY',
  config: { url: 'https://ntfy.example.test/', topic: 'alerts', priority: 'high', token: SECRETS.ntfy },
};
const email = {
  name: 'mail',
  type: 'EMAIL',
  config: {
    host: 'smtp.example.test',
    security: 'TLS',
    username: 'monctl',
    password: SECRETS.smtp,
    from: 'monctl@example.test',
    to: ['ops@example.test'],
  },
};

describe('notifiers CRUD', () => {
  let signingSecret = '';
  it('creates one of each type; the webhook signing secret is returned once', async () => {
    const hook = await call('POST', '/admin/api/notifiers', webhook);
    expect(hook.status, hook.text).toBe(200);
    signingSecret = hook.json().signingSecret;
    expect(signingSecret).toMatch(/^whsec_[A-Za-z0-9+/]+={0,2}$/);
    expect(Buffer.from(signingSecret.slice(6), 'base64').length).toBeGreaterThanOrEqual(24);
    responses.pop(); // the one-time display
    expect(hook.json()).toMatchObject({
      type: 'WEBHOOK',
      enabled: true,
      config: { url: webhook.config.url },
      secrets: { signingSecret: true, headers: ['Authorization'] },
    });
    for (const body of [slack, ntfy, email]) expect((await call('POST', '/admin/api/notifiers', body)).status).toBe(200);
    const list = (await call('GET', '/admin/api/notifiers')).json();
    expect(list.map((n: { name: string }) => n.name)).toEqual(['hook', 'chat', 'phone', 'mail']);
    expect(list[1]).toMatchObject({ config: { origin: 'https://hooks.example.test' }, secrets: { url: true } });
    expect(list[2]).toMatchObject({ config: { url: 'https://ntfy.example.test', topic: 'alerts', priority: 4 }, secrets: { token: true } });
    expect(list[3]).toMatchObject({
      config: { host: 'smtp.example.test', port: 465, security: 'TLS', username: 'monctl', to: ['ops@example.test'] },
      secrets: { password: true },
    });
    expect(list[3].config).not.toHaveProperty('password');
  });

  it('refuses a taken name with 409', async () => {
    const res = await call('POST', '/admin/api/notifiers', { ...slack, config: { url: 'https://hooks.example.test/other' } });
    expect(fieldsOf(expectProblem(res, 409))).toEqual(['name']);
  });

  it.each([
    ['a URL scheme other than http(s)', { name: 'x1', type: 'WEBHOOK', config: { url: 'ftp://example.test/' } }, ['config.url']],
    [
      'a bad email',
      { ...email, name: 'x2', config: { ...email.config, from: 'not-an-address', to: ['ops@example.test', 'no at'] } },
      ['config.from', 'config.to[1]'],
    ],
    ['a bad priority', { ...ntfy, name: 'x3', config: { ...ntfy.config, priority: 9 } }, ['config.priority']],
    ['a bad priority name', { ...ntfy, name: 'x4', config: { ...ntfy.config, priority: 'urgent' } }, ['config.priority']],
    [
      'a field of another type',
      { ...slack, name: 'x5', config: { url: 'https://hooks.example.test/x', topic: 'alerts' } },
      ['config.topic'],
    ],
    ['a missing required field', { name: 'x6', type: 'NTFY', config: { url: 'https://ntfy.example.test' } }, ['config.topic']],
    [
      'a reserved header',
      { ...webhook, name: 'x7', config: { url: 'https://example.test', headers: { 'Webhook-Signature': 'x' } } },
      ['config.headers.Webhook-Signature'],
    ],
    [
      'a header value with a line break',
      { ...webhook, name: 'x8', config: { url: 'https://example.test', headers: { 'X-A': 'a\r\nB: c' } } },
      ['config.headers.X-A'],
    ],
    ['a password without a username', { ...email, name: 'x9', config: { ...email.config, username: undefined } }, ['config.password']],
    [
      'a weak signing secret',
      { name: 'x10', type: 'WEBHOOK', config: { url: 'https://example.test', signingSecret: 'whsec_c2hvcnQ=' } },
      ['config.signingSecret'],
    ],
    ['a tlsCa that is not PEM', { ...email, name: 'x11', config: { ...email.config, tlsCa: 'not a certificate' } }, ['config.tlsCa']],
    ['an unknown type', { name: 'x12', type: 'PAGER', config: {} }, ['type']],
    ['an unknown config field', { name: 'x13', type: 'SLACK', config: { url: 'https://x.test', colour: 'red' } }, ['config.colour']],
  ])('answers 400 naming the field for %s', async (_what, body, fields) => {
    const problem = expectProblem(await call('POST', '/admin/api/notifiers', body), 400);
    expect(fieldsOf(problem)).toEqual(fields);
  });

  it('keeps secrets on update unless new ones are given', async () => {
    const phone = (await call('GET', '/admin/api/notifiers')).json().find((n: { name: string }) => n.name === 'phone');
    const res = await call('PATCH', `/admin/api/notifiers/${phone.id}`, { enabled: false, config: { priority: 'min' } });
    expect(res.status, res.text).toBe(200);
    expect(res.json()).toMatchObject({ enabled: false, config: { priority: 1 }, secrets: { token: true } });
    const dropped = (await call('PATCH', `/admin/api/notifiers/${phone.id}`, { config: { token: null } })).json();
    expect(dropped.secrets).toEqual({});
    const again = (await call('PATCH', `/admin/api/notifiers/${phone.id}`, { config: { token: SECRETS.ntfy2 } })).json();
    expect(again.secrets).toEqual({ token: true });
  });

  it('asks for the secrets again when the destination changes', async () => {
    const all = (await call('GET', '/admin/api/notifiers')).json();
    const id = (name: string) => all.find((n: { name: string }) => n.name === name).id;
    const moved = expectProblem(
      await call('PATCH', `/admin/api/notifiers/${id('phone')}`, { config: { url: 'https://elsewhere.test' } }),
      400,
    );
    expect(fieldsOf(moved)).toEqual(['config.token']);
    const hook = expectProblem(
      await call('PATCH', `/admin/api/notifiers/${id('hook')}`, { config: { url: 'https://elsewhere.test/hook' } }),
      400,
    );
    expect(fieldsOf(hook)).toEqual(['config.headers.Authorization']);
    const mail = expectProblem(await call('PATCH', `/admin/api/notifiers/${id('mail')}`, { config: { host: 'smtp.elsewhere.test' } }), 400);
    expect(fieldsOf(mail)).toEqual(['config.password']);
    // Given again (or dropped), the move is fine.
    const ok = await call('PATCH', `/admin/api/notifiers/${id('hook')}`, {
      config: { url: 'https://elsewhere.test/hook', headers: { authorization: null } },
    });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json().secrets).toEqual({ signingSecret: true });
    const mailOk = await call('PATCH', `/admin/api/notifiers/${id('mail')}`, {
      config: { host: 'smtp.elsewhere.test', security: 'STARTTLS', password: SECRETS.smtp },
    });
    expect(mailOk.json().config).toMatchObject({ host: 'smtp.elsewhere.test', security: 'STARTTLS', port: 587 });
  });

  it('rotates the signing secret of a webhook (shown once) and refuses it for other types', async () => {
    const all = (await call('GET', '/admin/api/notifiers')).json();
    const hook = all.find((n: { name: string }) => n.name === 'hook');
    const rotated = await call('POST', `/admin/api/notifiers/${hook.id}/signing-secret`);
    responses.pop();
    expect(rotated.json().signingSecret).toMatch(/^whsec_/);
    expect(rotated.json().signingSecret).not.toBe(signingSecret);
    const chat = all.find((n: { name: string }) => n.name === 'chat');
    expectProblem(await call('POST', `/admin/api/notifiers/${chat.id}/signing-secret`), 409);
  });

  it('pages the deliveries newest first, with a Link to the next page', async () => {
    const hook = (await call('GET', '/admin/api/notifiers')).json().find((n: { name: string }) => n.name === 'hook');
    for (let i = 0; i < 3; i++)
      expect((await call('POST', `/admin/api/notifiers/${hook.id}/test`)).json()).toMatchObject({ ok: false, retryable: true });
    const first = await call('GET', `/admin/api/notifiers/${hook.id}/deliveries?limit=2`);
    expect(first.json()).toHaveLength(2);
    expect(first.json()[0].id).toBeGreaterThan(first.json()[1].id);
    expect(first.json()[0]).toMatchObject({
      notificationId: null,
      attempt: 1,
      ok: false,
      statusCode: null,
      messageId: expect.stringMatching(/^msg_/),
    });
    const next = /<([^>]+)>; rel="next"/.exec(String(first.headers.link))![1];
    const rest = (await call('GET', next)).json();
    expect(rest).toHaveLength(1);
    expect(rest[0].id).toBeLessThan(first.json()[1].id);
  });

  it('deletes a notifier (404 after), and 404s unknown ids everywhere', async () => {
    const chat = (await call('GET', '/admin/api/notifiers')).json().find((n: { name: string }) => n.name === 'chat');
    expect((await call('DELETE', `/admin/api/notifiers/${chat.id}`)).json()).toEqual({ status: 'deleted' });
    for (const [method, path] of [
      ['GET', ''],
      ['DELETE', ''],
      ['POST', '/test'],
      ['GET', '/deliveries'],
    ] as const) {
      expectProblem(await call(method, `/admin/api/notifiers/${chat.id}${path}`), 404);
    }
  });

  it('is ADMIN only', async () => {
    const key = await d.admin.call(operations.createApiKey, { body: { name: 'notifier-reader', role: 'USER' } });
    const res = await send(d.url, 'GET', '/admin/api/notifiers', { headers: bearer(key.token) });
    expectProblem(res, 403);
  });
});

describe('secrets stay secret', () => {
  it('no read returns them', async () => {
    const all = (await call('GET', '/admin/api/notifiers')).json();
    for (const n of all) await call('GET', `/admin/api/notifiers/${n.id}`);
    const text = responses.join('\n');
    expect(text).toContain('"secrets"');
    for (const [name, value] of Object.entries(SECRETS)) expect(text.includes(value), name).toBe(false);
  });

  it('no log line has them', () => {
    const logs = d.logs.map((l) => JSON.stringify(l)).join('\n') + d.stderr();
    expect(logs).toContain('notifier created');
    for (const [name, value] of Object.entries(SECRETS)) expect(logs.includes(value), name).toBe(false);
  });

  it('the database holds them sealed, never in clear', async () => {
    const bytes = await databaseBytes(d);
    expect(bytes.includes(Buffer.from('ops@example.test')), 'the config is stored in clear').toBe(true);
    for (const [name, value] of Object.entries(SECRETS)) expect(bytes.includes(Buffer.from(value)), name).toBe(false);
  });
});
