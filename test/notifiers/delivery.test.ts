import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import type { NotifierCreated } from '../../src/api/schemas/notifiers.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { type Receiver, startNtfyReceiver, startReceiver, startSlackReceiver, startWebhookReceiver } from './receivers.ts';

/**
 * `POST /admin/api/notifiers/{id}/test` against real receivers on loopback:
 * a Standard Webhooks consumer that verifies the signature (and refuses a
 * wrong secret), a Slack incoming webhook, an ntfy server checking topic,
 * priority and token, and receivers answering 500, 404, 429, 408 or nothing,
 * which give the retryable classification the dispatcher relies on.
 */
let d: TestDaemon;
const receivers: Receiver[] = [];
const PUBLIC_URL = 'https://monctl.example.test';

beforeAll(async () => {
  d = await startDaemon({ args: ['--public-url', `${PUBLIC_URL}/`, '--notifier-timeout', '1s'] });
});
afterAll(async () => {
  await d?.stop();
  await Promise.all(receivers.map((r) => r.close()));
});

const keep = <R extends Receiver>(r: R) => (receivers.push(r), r);
const create = (body: Parameters<typeof d.admin.call<typeof operations.createNotifier>>[1]) =>
  d.admin.call(operations.createNotifier, body) as Promise<NotifierCreated>;
const test = (id: number) => d.admin.call(operations.testNotifier, { params: { id } });
const deliveries = (id: number) => d.admin.call(operations.listNotifierDeliveries, { params: { id } });

describe('WEBHOOK', () => {
  it('is verified by a Standard Webhooks consumer with the secret shown at creation', async () => {
    let secret = '';
    const receiver = keep(await startWebhookReceiver(() => secret));
    const n = await create({
      body: { name: 'signed', type: 'WEBHOOK', config: { url: `${receiver.url}/hooks/monctl`, headers: { 'X-Team': 'ops-secret' } } },
    });
    secret = n.signingSecret!;
    const result = await test(n.id);
    expect(result, JSON.stringify(receiver.refused)).toMatchObject({ ok: true, statusCode: 204, error: null });
    expect(receiver.verified).toHaveLength(1);
    const [req] = receiver.received;
    expect(req).toMatchObject({ method: 'POST', path: '/hooks/monctl' });
    expect(req.headers).toMatchObject({ 'content-type': 'application/json', 'x-team': 'ops-secret', 'webhook-id': result.messageId });
    expect(req.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const body = JSON.parse(req.body);
    expect(body).toMatchObject({
      type: 'monctl.alert',
      timestamp: expect.stringMatching(/Z$/),
      data: { test: true, messageId: result.messageId, items: [], link: `${PUBLIC_URL}/` },
    });
    expect(body.data.text).toMatch(/test message from monctl through notifier "signed"/);
  });

  it('is refused by the consumer when the secret is not the one it holds', async () => {
    const receiver = keep(await startWebhookReceiver(() => 'whsec_' + Buffer.alloc(32, 7).toString('base64')));
    const n = await create({ body: { name: 'wrong-secret', type: 'WEBHOOK', config: { url: receiver.url } } });
    const result = await test(n.id);
    expect(result).toMatchObject({ ok: false, statusCode: 401, retryable: false });
    expect(receiver.refused).toEqual(['No matching signature found']);
    expect(receiver.verified).toEqual([]);
  });

  it('is refused after the secret was rotated, until the consumer has the new one', async () => {
    let secret = '';
    const receiver = keep(await startWebhookReceiver(() => secret));
    const n = await create({ body: { name: 'rotated', type: 'WEBHOOK', config: { url: receiver.url } } });
    secret = n.signingSecret!;
    const { signingSecret } = await d.admin.call(operations.rotateNotifierSigningSecret, { params: { id: n.id } });
    expect((await test(n.id)).ok).toBe(false);
    secret = signingSecret;
    expect((await test(n.id)).ok).toBe(true);
  });

  it('signs with a signing secret given at creation', async () => {
    const secret = 'whsec_' + Buffer.alloc(24, 42).toString('base64');
    const receiver = keep(await startWebhookReceiver(() => secret));
    const n = await create({ body: { name: 'own-secret', type: 'WEBHOOK', config: { url: receiver.url, signingSecret: secret } } });
    expect(n.signingSecret).toBeUndefined();
    expect((await test(n.id)).ok).toBe(true);
  });
});

describe('SLACK', () => {
  it('posts a payload whose text carries the whole message', async () => {
    const receiver = keep(await startSlackReceiver('/services/T1/B1/token'));
    const n = await create({ body: { name: 'slack', type: 'SLACK', config: { url: `${receiver.url}/services/T1/B1/token` } } });
    expect(await test(n.id)).toMatchObject({ ok: true, statusCode: 200 });
    expect(receiver.texts).toHaveLength(1);
    expect(receiver.texts[0]).toMatch(/^monctl test notification\nThis is a test message from monctl/);
    expect(receiver.texts[0]).toContain(`Daemon: ${PUBLIC_URL}/`);
  });

  it('gets no_service (404, not retried) for a wrong token', async () => {
    const receiver = keep(await startSlackReceiver('/services/T1/B1/token'));
    const n = await create({ body: { name: 'slack-bad', type: 'SLACK', config: { url: `${receiver.url}/services/T1/B1/revoked` } } });
    expect(await test(n.id)).toMatchObject({ ok: false, statusCode: 404, retryable: false, error: 'HTTP 404: no_service' });
  });
});

describe('NTFY', () => {
  it('publishes to the topic with the token, the priority and a click link', async () => {
    const receiver = keep(await startNtfyReceiver('tk_phone', 'monctl-alerts'));
    const n = await create({
      body: {
        name: 'ntfy',
        type: 'NTFY',
        config: { url: `${receiver.url}/`, topic: 'monctl-alerts', priority: 'high', token: 'tk_phone' },
      },
    });
    expect(await test(n.id)).toMatchObject({ ok: true, statusCode: 200 });
    // A test is not bad news: it rings at most at the default priority.
    expect(receiver.messages).toEqual([
      expect.objectContaining({
        topic: 'monctl-alerts',
        title: 'monctl test notification',
        priority: 3,
        tags: ['test_tube'],
        click: `${PUBLIC_URL}/`,
      }),
    ]);
  });

  it('is refused (403, not retried) with a wrong token, and 401 without one', async () => {
    const receiver = keep(await startNtfyReceiver('tk_phone', 'monctl-alerts'));
    const wrong = await create({
      body: { name: 'ntfy-wrong', type: 'NTFY', config: { url: receiver.url, topic: 'monctl-alerts', token: 'tk_other' } },
    });
    expect(await test(wrong.id)).toMatchObject({ ok: false, statusCode: 403, retryable: false });
    const none = await create({ body: { name: 'ntfy-none', type: 'NTFY', config: { url: receiver.url, topic: 'monctl-alerts' } } });
    expect(await test(none.id)).toMatchObject({ ok: false, statusCode: 401, retryable: false });
    expect(receiver.messages).toEqual([]);
  });
});

describe('retryable, by what the receiver answers', () => {
  it.each([
    [500, true],
    [503, true],
    [408, true],
    [429, true],
    [404, false],
    [400, false],
    [410, false],
    [301, false],
  ])('HTTP %i: retryable %s, recorded in the deliveries', async (status, retryable) => {
    const receiver = keep(await startReceiver(() => ({ status, body: `answer ${status}` })));
    const n = await create({ body: { name: `answers-${status}`, type: 'SLACK', config: { url: `${receiver.url}/x` } } });
    const result = await test(n.id);
    expect(result).toMatchObject({ ok: false, statusCode: status, retryable });
    expect(result.error).toMatch(new RegExp(`^HTTP ${status}`));
    expect(await deliveries(n.id)).toEqual([
      expect.objectContaining({ messageId: result.messageId, ok: false, statusCode: status, notificationId: null }),
    ]);
  });

  it('a receiver that never answers: a timeout, retryable', async () => {
    const receiver = keep(await startReceiver(() => ({ status: 0 })));
    const n = await create({ body: { name: 'silent', type: 'WEBHOOK', config: { url: receiver.url } } });
    const result = await test(n.id);
    expect(result).toMatchObject({ ok: false, statusCode: null, retryable: true, error: 'timeout after 1000 ms' });
    expect(receiver.received).toHaveLength(1);
  });

  it('nothing listening: a network error, retryable', async () => {
    const receiver = await startReceiver();
    const url = receiver.url;
    await receiver.close();
    const n = await create({ body: { name: 'closed', type: 'WEBHOOK', config: { url } } });
    expect(await test(n.id)).toMatchObject({ ok: false, statusCode: null, retryable: true, error: expect.stringMatching(/ECONNREFUSED/) });
  });

  it('a success is recorded as ok with its status and latency', async () => {
    const receiver = keep(await startReceiver(() => ({ status: 202 })));
    const n = await create({ body: { name: 'accepts', type: 'SLACK', config: { url: receiver.url } } });
    await test(n.id);
    const [attempt] = await deliveries(n.id);
    expect(attempt).toMatchObject({ ok: true, statusCode: 202, error: null, attempt: 1 });
    expect(attempt.latencyMs).toBeGreaterThanOrEqual(0);
  });
});
