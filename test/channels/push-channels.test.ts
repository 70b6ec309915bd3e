import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon } from '../helpers/daemon.ts';
import { type AlertWorld, eventually, startTarget, worldOf } from '../alerts/world.ts';
import type { ProviderReceiver, Reply } from './provider-receiver.ts';
import { type GotifyMessage, type PushoverMessage, startGotify, startPushover } from './push-receivers.ts';
import { startTelegram, type TelegramMessage } from './telegram-receiver.ts';

/**
 * TELEGRAM, PUSHOVER and GOTIFY against receivers written from each provider's documentation:
 * - Telegram: https://core.telegram.org/bots/api#sendmessage, #markdownv2-style, #making-requests
 * - Pushover: https://pushover.net/api
 * - Gotify: https://gotify.net/api-docs, https://gotify.net/docs/msgextras
 * A real incident on a resource named with Markdown and HTML special characters goes out through
 * the dispatcher to all three, the providers' rate limits are waited out (Telegram's
 * `retry_after` without a header, Pushover's Retry-After), the recovery follows, and refusals are
 * not retried. One daemon for the file.
 */
const NAME = 'db_*[prod]*<b>&amp;`(1)_x.y!';
const TG_TOKEN = '123456789:AAE_secret-Token_0123456789abcdefXYZ';
const PO_TOKEN = 'azGDORePK8gMaC0QOYAMyEEuzJnyUi';
const PO_USER = 'uQiRzpo4DXghDmr9QzzfQu27cmVRsG';
const GO_TOKEN = 'AsWIJhvlHb.xgKe';
const PUBLIC_URL = 'https://monctl.example.test';

let w: AlertWorld;
let tg: ProviderReceiver<TelegramMessage>;
let po: ProviderReceiver<PushoverMessage>;
let go: ProviderReceiver<GotifyMessage>;
const ids = { tg: 0, po: 0, go: 0 };
const closing: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  const d = await startDaemon({ args: ['--scheduler', 'off', '--notifier-retry-base', '200ms', '--public-url', `${PUBLIC_URL}/`] });
  closing.push(() => d.stop());
  const target = await startTarget();
  closing.push(() => target.close());
  w = worldOf(d, target);
  [tg, po, go] = await Promise.all([startTelegram(TG_TOKEN, '-1001234567890'), startPushover(PO_TOKEN, PO_USER), startGotify(GO_TOKEN)]);
  closing.push(
    () => tg.close(),
    () => po.close(),
    () => go.close(),
  );
  ids.tg = (await w.notifier('tg', 'TELEGRAM', { token: TG_TOKEN, chatId: '-1001234567890', apiUrl: `${tg.url}/` })).id;
  ids.po = (
    await w.notifier('po', 'PUSHOVER', {
      token: PO_TOKEN,
      userKey: PO_USER,
      priority: 2,
      retrySeconds: 45,
      expireSeconds: 600,
      apiUrl: po.url,
    })
  ).id;
  ids.go = (await w.notifier('go', 'GOTIFY', { url: `${go.url}/`, token: GO_TOKEN, priority: 8 })).id;
});
afterAll(async () => {
  for (const close of closing.reverse()) await close();
});

const deliveries = (id: number) =>
  w.call<Array<{ ok: boolean; error: string | null; statusCode: number | null }>>('GET', `/admin/api/notifiers/${id}/deliveries`);
const test = (id: number) =>
  w.call<{ ok: boolean; statusCode: number | null; error: string | null; retryable: boolean }>('POST', `/admin/api/notifiers/${id}/test`);

describe('an incident and its recovery', () => {
  it('reach all three, escaped for each, after waiting as long as the providers ask', async () => {
    // Telegram's flood control: 429 with retry_after in the body and no Retry-After header.
    tg.queue({
      status: 429,
      body: { ok: false, error_code: 429, description: 'Too Many Requests: retry after 2', parameters: { retry_after: 2 } },
    });
    po.queue({ status: 429, body: { status: 0, errors: ['application is over its message quota'] }, headers: { 'retry-after': '1' } });
    const r = await w.resource(NAME, { target: `${w.target.url}/db` });
    await w.rule({
      name: 'push',
      events: ['INCIDENT_OPENED', 'INCIDENT_RESOLVED'],
      notifierIds: [ids.tg, ids.po, ids.go],
      resourceIds: [r.id],
    });
    w.target.status = 503;
    await w.checks(r.id, 3);
    await eventually(
      'the opening at all three',
      () => tg.accepted.length === 1 && po.accepted.length === 1 && go.accepted.length === 1,
      20_000,
    );
    expect([tg.refused, po.refused, go.refused]).toEqual([[], [], []]);

    // Retried, not sooner than asked: the backoff alone would have been 100 to 200 ms.
    expect(tg.hits).toHaveLength(2);
    expect(tg.hits[1].at - tg.hits[0].at).toBeGreaterThanOrEqual(2000);
    expect(po.hits).toHaveLength(2);
    expect(po.hits[1].at - po.hits[0].at).toBeGreaterThanOrEqual(1000);
    const tgLog = await deliveries(ids.tg);
    expect(tgLog.map((a) => [a.ok, a.statusCode])).toEqual(
      expect.arrayContaining([
        [false, 429],
        [true, 200],
      ]),
    );
    expect(tgLog.find((a) => !a.ok)?.error).toBe('Telegram 429: Too Many Requests: retry after 2');

    // Telegram: exactly the MarkdownV2 escapes; shown as the name; the title bold; no preview.
    const [t] = tg.accepted;
    expect(t.text).toContain('db\\_\\*\\[prod\\]\\*<b\\>&amp;\\`\\(1\\)\\_x\\.y\\!');
    expect(t.bold).toEqual([`DOWN: ${NAME}`]);
    expect(t.shown).toContain(`${NAME} is DOWN.`);
    expect(t.link_preview_options).toEqual({ is_disabled: true });

    // Pushover: HTML entities, emergency priority with its repeat and expiry, the link.
    const [p] = po.accepted;
    expect(p).toMatchObject({ title: `DOWN: ${NAME}`, html: 1, priority: 2, retry: 45, expire: 600, url_title: 'Open in monctl' });
    expect(p.message).toContain('db_*[prod]*&lt;b&gt;&amp;amp;`(1)_x.y! is DOWN.');
    expect(p.url).toMatch(new RegExp(`^${PUBLIC_URL}/admin/api/incidents/\\d+$`));

    // Gotify: Markdown escapes, the configured priority, markdown display and the click link.
    const [g] = go.accepted;
    expect(g).toMatchObject({ title: `DOWN: ${NAME}`, priority: 8, extras: { 'client::display': { contentType: 'text/markdown' } } });
    expect(g.message).toContain('db\\_\\*\\[prod\\]\\*\\<b\\>\\&amp;\\`\\(1\\)\\_x\\.y\\! is DOWN\\.  \n');
    expect(g.extras?.['client::notification']?.click?.url).toBe(p.url);

    w.target.status = 200;
    await w.check(r.id);
    await eventually(
      'the recovery at all three',
      () => tg.accepted.length === 2 && po.accepted.length === 2 && go.accepted.length === 2,
      20_000,
    );
    expect(tg.accepted[1].bold).toEqual([`UP: ${NAME}`]);
    // A resolution does not ring like an outage: no emergency, no repeat.
    expect(po.accepted[1].priority).toBe(0);
    expect(po.accepted[1]).not.toHaveProperty('retry');
    expect(po.accepted[1]).not.toHaveProperty('expire');
    expect(go.accepted[1].priority).toBe(5);
  }, 60_000);
});

describe('refusals', () => {
  it.each<[string, keyof typeof ids, Reply, string]>([
    [
      'TELEGRAM 400',
      'tg',
      { status: 400, body: { ok: false, error_code: 400, description: 'Bad Request: chat not found' } },
      'Telegram 400: Bad Request: chat not found',
    ],
    [
      'TELEGRAM 403',
      'tg',
      { status: 403, body: { ok: false, error_code: 403, description: 'Forbidden: bot was blocked by the user' } },
      'Telegram 403: Forbidden: bot was blocked by the user',
    ],
    [
      'PUSHOVER 400',
      'po',
      { status: 400, body: { user: 'invalid', errors: ['user identifier is invalid'], status: 0 } },
      'Pushover 400: user identifier is invalid',
    ],
    [
      'GOTIFY 401',
      'go',
      { status: 401, body: { error: 'Unauthorized', errorCode: 401, errorDescription: 'you need to provide a valid access token' } },
      'Gotify 401 Unauthorized: you need to provide a valid access token',
    ],
    [
      'GOTIFY 403',
      'go',
      { status: 403, body: { error: 'Forbidden', errorCode: 403, errorDescription: 'you are not allowed to access this api' } },
      'Gotify 403 Forbidden: you are not allowed to access this api',
    ],
  ])('%s is not retried, and the delivery log says why', async (_, which, reply, error) => {
    ({ tg, po, go })[which].queue(reply);
    expect(await test(ids[which])).toMatchObject({ ok: false, statusCode: reply.status, retryable: false, error });
  });

  it('the test message goes through with the checks passing', async () => {
    for (const which of ['tg', 'po', 'go'] as const) expect(await test(ids[which])).toMatchObject({ ok: true, error: null });
    // A test is not an emergency.
    expect(po.accepted.at(-1)).toMatchObject({ priority: 0 });
  });
});

describe('the bot token', () => {
  it('never appears in an error, the delivery log or the daemon log, even when a proxy quotes the URL', async () => {
    const proxy = await startTelegram('0:none', '0');
    closing.push(() => proxy.close());
    // A proxy's error page that quotes the request line, as some do, raw and percent-encoded.
    const path = `/bot${TG_TOKEN}/sendMessage`;
    const quoted = (status: number): Reply => ({ status, body: `error for POST ${path} (${encodeURIComponent(path)})` });
    const n = await w.notifier('tg-proxy', 'TELEGRAM', { token: TG_TOKEN, chatId: '@monctl_ops', apiUrl: proxy.url });
    proxy.queue(quoted(502));
    const result = await test(n.id);
    expect(result).toMatchObject({ ok: false, statusCode: 502, retryable: true });
    expect(result.error).toContain('/bot<token>/sendMessage (%2Fbot<token>%2FsendMessage)');

    // Through the dispatcher: a refusal gives the notification up, and the daemon logs why.
    proxy.queue(quoted(404));
    const r = await w.resource('behind-proxy', { target: `${w.target.url}/proxy` });
    await w.rule({ name: 'proxy', events: ['INCIDENT_OPENED'], notifierIds: [n.id], resourceIds: [r.id] });
    w.target.status = 503;
    await w.checks(r.id, 3);
    const givenUp = () => w.d.logs.find((l) => l.msg === 'notification given up' && l.notifierId === n.id);
    await eventually('the notification given up, in the daemon log', () => givenUp() !== undefined);
    expect(String(givenUp()!.error)).toContain('/bot<token>/sendMessage');

    // A network error (nothing listens there any more) goes through the same redaction.
    await proxy.close();
    expect((await test(n.id)).ok).toBe(false);
    const everything = JSON.stringify([await deliveries(n.id), await deliveries(ids.tg), w.d.logs, w.d.stderr()]);
    expect(everything).not.toContain(TG_TOKEN.split(':')[1]);
  });
});

describe('config checks', () => {
  it.each<[string, string, Record<string, unknown>, string]>([
    ['a malformed bot token', 'TELEGRAM', { token: 'not-a-token', chatId: '42' }, 'config.token'],
    ['a chat that is neither a number nor @name', 'TELEGRAM', { token: '1:a', chatId: 'ops room' }, 'config.chatId'],
    ['an ftp apiUrl', 'TELEGRAM', { token: '1:a', chatId: '42', apiUrl: 'ftp://x' }, 'config.apiUrl'],
    ['a short user key', 'PUSHOVER', { token: PO_TOKEN, userKey: 'short' }, 'config.userKey'],
    ['a priority given as a string', 'PUSHOVER', { token: PO_TOKEN, userKey: PO_USER, priority: '2' }, 'config.priority'],
    ['priority 3', 'PUSHOVER', { token: PO_TOKEN, userKey: PO_USER, priority: 3 }, 'config.priority'],
    [
      'retrySeconds without emergency priority',
      'PUSHOVER',
      { token: PO_TOKEN, userKey: PO_USER, priority: 1, retrySeconds: 60 },
      'config.retrySeconds',
    ],
    ['GOTIFY priority 11', 'GOTIFY', { url: 'https://push.example', token: 'A', priority: 11 }, 'config.priority'],
    ['a GOTIFY url with a token in its query', 'GOTIFY', { url: 'https://push.example/?token=A', token: 'A' }, 'config.url'],
  ])('%s is a 400 naming the field', async (_, type, config, field) => {
    const res = await fetch(`${w.d.url}/admin/api/notifiers`, {
      method: 'POST',
      headers: { authorization: `Bearer ${w.d.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `bad-${field.slice(7)}-${Math.random().toString(36).slice(2, 8)}`, type, config }),
    });
    expect(res.status).toBe(400);
    const problem = (await res.json()) as { errors?: Array<{ field: string }> };
    expect(problem.errors?.map((e) => e.field)).toContain(field);
  });

  it('PATCH: the same apiUrl with a slash is no move; another one asks for the token again; priority 2 drops retry', async () => {
    const patch = (id: number, config: Record<string, unknown>) =>
      fetch(`${w.d.url}/admin/api/notifiers/${id}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${w.d.adminKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ config }),
      });
    expect((await patch(ids.tg, { apiUrl: `${tg.url}//` })).status).toBe(200);
    const moved = await patch(ids.tg, { apiUrl: 'https://api.telegram.example' });
    expect(moved.status).toBe(400);
    expect(((await moved.json()) as { errors: Array<{ field: string }> }).errors.map((e) => e.field)).toEqual(['config.token']);
    // Leaving emergency priority keeps no orphan repeat: retrySeconds must go with it.
    expect((await patch(ids.po, { priority: 1 })).status).toBe(400);
    expect((await patch(ids.po, { priority: 1, retrySeconds: null, expireSeconds: null })).status).toBe(200);
    expect((await patch(ids.po, { priority: 2, retrySeconds: 45, expireSeconds: 600 })).status).toBe(200);
  });

  it('reads back the defaults and the trimmed URLs', async () => {
    const read = await w.call('GET', `/admin/api/notifiers/${ids.go}`);
    expect(read.config).toEqual({ url: go.url, priority: 8 });
    expect(read.secrets).toEqual({ token: true });
    const tgRead = await w.call('GET', `/admin/api/notifiers/${ids.tg}`);
    expect(tgRead.config).toEqual({ chatId: '-1001234567890', apiUrl: tg.url });
  });
});
