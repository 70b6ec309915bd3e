import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPSGENIE_HOSTS, opsgenieBase } from '../../daemon/alerts/notifiers/channels/opsgenie.ts';
import { startDaemon } from '../helpers/daemon.ts';
import { dropDatabaseFor } from '../helpers/test-database.ts';
import { ALERT_TEST_ARGS, type AlertWorld, eventually, startTarget, worldOf } from '../alerts/world.ts';
import { startMatrixReceiver } from './matrix-receiver.ts';
import { startOpsgenieReceiver, startPagerDutyReceiver } from './pager-receivers.ts';

/**
 * PAGERDUTY, OPSGENIE and MATRIX against receivers written from the providers' documentation
 * (the URLs are in pager-receivers.ts: PagerDuty Events API v2 trigger and resolve events,
 * Opsgenie's Alert API, the Matrix Client-Server API v1.11). One daemon, restarted once on its
 * data dir: an incident that opens before the restart and resolves after it reaches PagerDuty as
 * one trigger and one resolve of one dedup_key, and Opsgenie as one create and one close of one
 * alias. The resource's name carries Markdown and HTML; 429s are answered and waited out.
 */
const ROUTING_KEY = 'R0UT1NGKEY0123456789abcdefABCDEF';
const GENIE_KEY = 'eb243592-faa2-4ba2-a551-1afdf565c889';
const MATRIX_TOKEN = 'syt_bW9uY3Rs_abcdefghijklmnop_0AbCdE';
const ROOM = '!ops:example.org';
const NAME = 'db_*[prod]*<b>&amp;`(1)';
const PUBLIC_URL = 'https://monctl.example.test';
const ARGS = [
  '--scheduler',
  'off',
  '--notifier-retry-base',
  '200ms',
  '--notifier-timeout',
  '1s',
  '--public-url',
  PUBLIC_URL,
  ...ALERT_TEST_ARGS,
];

const base = mkdtempSync(join(tmpdir(), 'monctl-pagers-'));
const dataDir = join(base, 'data');
let w: AlertWorld;
let pd: Awaited<ReturnType<typeof startPagerDutyReceiver>>;
let og: Awaited<ReturnType<typeof startOpsgenieReceiver>>;
let mx: Awaited<ReturnType<typeof startMatrixReceiver>>;

beforeAll(async () => {
  [pd, og, mx] = await Promise.all([
    startPagerDutyReceiver(ROUTING_KEY),
    startOpsgenieReceiver(GENIE_KEY),
    startMatrixReceiver(MATRIX_TOKEN, { '#ops:example.org': ROOM }),
  ]);
  w = worldOf(await startDaemon({ dataDir, args: ARGS }), await startTarget());
});
afterAll(async () => {
  await w?.d.stop();
  await w?.target.close();
  await Promise.all([pd?.close(), og?.close(), mx?.close()]);
  await dropDatabaseFor(dataDir);
  rmSync(base, { recursive: true, force: true });
});

const notifiers = () => ({
  pagerduty: { routingKey: ROUTING_KEY, apiUrl: `${pd.url}/` },
  opsgenie: { apiKey: GENIE_KEY, region: 'EU', apiUrl: og.url },
  matrix: { homeserver: mx.url, token: MATRIX_TOKEN, roomId: '#ops:example.org' },
});
const test = (id: number) => w.call('POST', `/admin/api/notifiers/${id}/test`);

describe('config', () => {
  it('refuses a routing key that is not 32 characters, an apiUrl with a query, a room that is neither id nor alias', async () => {
    const refused = async (type: string, config: Record<string, unknown>) => {
      const res = await fetch(`${w.d.url}/admin/api/notifiers`, {
        method: 'POST',
        headers: { authorization: `Bearer ${w.d.adminKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `bad-${type}`, type, config }),
      });
      expect(res.status).toBe(400);
      return ((await res.json()) as { errors: Array<{ field: string }> }).errors.map((e) => e.field);
    };
    expect(await refused('PAGERDUTY', { routingKey: 'short' })).toEqual(['config.routingKey']);
    expect(await refused('OPSGENIE', { apiKey: GENIE_KEY, apiUrl: 'https://proxy.example/?x=1' })).toEqual(['config.apiUrl']);
    expect(await refused('MATRIX', { homeserver: mx.url, token: MATRIX_TOKEN, roomId: 'ops' })).toEqual(['config.roomId']);
  });

  it('targets the Opsgenie region host without apiUrl, and apiUrl when given', () => {
    expect(opsgenieBase({})).toBe('https://api.opsgenie.com');
    expect(opsgenieBase({ region: 'US' })).toBe(OPSGENIE_HOSTS.US);
    expect(opsgenieBase({ region: 'EU' })).toBe('https://api.eu.opsgenie.com');
    expect(opsgenieBase({ region: 'EU', apiUrl: 'http://127.0.0.1:9' })).toBe('http://127.0.0.1:9');
  });
});

describe('test messages', () => {
  it('PAGERDUTY: an info trigger under test-<message id>, resolved at once', async () => {
    const n = await w.notifier('pd-test', 'PAGERDUTY', notifiers().pagerduty);
    const result = await test(n.id);
    expect(result, JSON.stringify(pd.refusals)).toMatchObject({ ok: true, statusCode: 202 });
    const key = `test-${result.messageId}`;
    expect(pd.events.map((e) => [e.event_action, e.dedup_key, e.payload?.severity])).toEqual([
      ['trigger', key, 'info'],
      ['resolve', key, undefined],
    ]);
    pd.events.length = 0;
  });

  it('OPSGENIE: a P5 alert under alias test-<message id>, closed at once', async () => {
    const n = await w.notifier('og-test', 'OPSGENIE', notifiers().opsgenie);
    const result = await test(n.id);
    expect(result, JSON.stringify(og.refusals)).toMatchObject({ ok: true, statusCode: 202 });
    const alias = `test-${result.messageId}`;
    expect(og.events.map((e) => [e.op, e.alias, e.body.priority])).toEqual([
      ['create', alias, 'P5'],
      ['close', alias, undefined],
    ]);
    og.events.length = 0;
  });

  it('MATRIX: the alias resolved to the room, an m.text with an HTML body', async () => {
    const n = await w.notifier('mx-test', 'MATRIX', notifiers().matrix);
    expect(await test(n.id), JSON.stringify(mx.refusals)).toMatchObject({ ok: true, statusCode: 200 });
    expect(mx.events).toEqual([
      expect.objectContaining({
        roomId: ROOM,
        content: expect.objectContaining({
          msgtype: 'm.text',
          format: 'org.matrix.custom.html',
          body: expect.stringMatching(/^monctl test notification\nThis is a test message/),
          formatted_body: expect.stringMatching(/^<strong>monctl test notification<\/strong><br>This is a test message/),
        }),
      }),
    ]);
    mx.events.length = 0;
  });

  it('provider refusals are not retried and say what the provider said', async () => {
    const other = await startPagerDutyReceiver('X'.repeat(32));
    const opsgenie = await startOpsgenieReceiver('another-key');
    try {
      const n = await w.notifier('pd-wrong', 'PAGERDUTY', { routingKey: ROUTING_KEY, apiUrl: other.url });
      expect(await test(n.id)).toMatchObject({
        ok: false,
        statusCode: 400,
        retryable: false,
        error: "HTTP 400: Event object is invalid: 'routing_key' is not a valid integration key",
      });
      const o = await w.notifier('og-wrong', 'OPSGENIE', { apiKey: GENIE_KEY, apiUrl: opsgenie.url });
      expect(await test(o.id)).toMatchObject({ ok: false, statusCode: 401, retryable: false, error: 'HTTP 401: Could not authenticate' });
      const m = await w.notifier('mx-wrong', 'MATRIX', { ...notifiers().matrix, token: 'syt_revoked' });
      expect(await test(m.id)).toMatchObject({
        ok: false,
        statusCode: 401,
        retryable: false,
        error: 'HTTP 401: M_UNKNOWN_TOKEN: Unknown access token',
      });
    } finally {
      await Promise.all([other.close(), opsgenie.close()]);
    }
  });
});

describe('an incident across a daemon restart', () => {
  it('reaches PagerDuty as one trigger and one resolve, Opsgenie as one create and one close, with the incident id as key', async () => {
    const ids = {
      pd: (await w.notifier('pd', 'PAGERDUTY', notifiers().pagerduty)).id,
      og: (await w.notifier('og', 'OPSGENIE', notifiers().opsgenie)).id,
      mx: (await w.notifier('mx', 'MATRIX', notifiers().matrix)).id,
    };
    await w.rule({ name: 'page', events: ['INCIDENT_OPENED', 'INCIDENT_RESOLVED'], notifierIds: Object.values(ids) });
    // A warning resource: PagerDuty gets warning, Opsgenie P3.
    const r = await w.resource(NAME, { target: `${w.target.url}/db`, severity: 'warning' });
    // PagerDuty and Opsgenie throttle the first request; Matrix takes the event and loses its answer.
    pd.throttle(1, 1);
    og.throttle(1, 1);
    mx.loseAnswers(1);
    for (const r of [pd, og, mx]) r.refusals.length = 0;
    const putsBefore = mx.received.filter((q) => q.method === 'PUT').length;
    w.target.status = 503;
    await w.checks(r.id, 3);
    const [incident] = await w.call('GET', `/admin/api/incidents?resourceId=${r.id}&state=open`);
    const key = String(incident.id);
    await eventually(
      'the trigger, the create and the room message',
      () => pd.events.length >= 1 && og.events.length >= 1 && mx.events.length >= 1,
    );

    // Retried no sooner than Retry-After asked (the backoff alone is 100 to 200 ms).
    for (const log of [pd.log, og.log]) {
      const throttled = log.findIndex((l) => l.status === 429);
      expect(log[throttled + 1].at - log[throttled].at).toBeGreaterThanOrEqual(1000);
    }
    const [trigger] = pd.events;
    expect(trigger).toMatchObject({
      event_action: 'trigger',
      dedup_key: key,
      payload: {
        summary: `DOWN: ${NAME}`,
        source: `${w.target.url}/db`,
        severity: 'warning',
        component: NAME,
        group: 'resource',
        class: 'INCIDENT_OPENED',
        custom_details: expect.objectContaining({ errorCode: '503', link: `${PUBLIC_URL}/admin/api/incidents/${key}` }),
      },
      links: [{ href: `${PUBLIC_URL}/admin/api/incidents/${key}`, text: 'monctl' }],
      client: 'monctl',
    });
    const [create] = og.events;
    expect(create).toMatchObject({
      op: 'create',
      alias: key,
      body: {
        message: `DOWN: ${NAME}`,
        priority: 'P3',
        source: 'monctl',
        entity: NAME,
        details: expect.objectContaining({ severity: 'warning' }),
      },
    });
    expect(create.body.description).toContain(`${NAME} is DOWN.`);
    // Matrix: the name as text in `body`, escaped in the HTML; the retry after the lost answer reused the transaction.
    const [room] = mx.events;
    expect(room.content.body).toContain(`${NAME} is DOWN.`);
    expect(room.content.formatted_body).toContain('db_*[prod]*&lt;b&gt;&amp;amp;`(1) is DOWN.');
    expect(room.content.formatted_body).not.toContain('<b>');
    await eventually('the Matrix retry', () => mx.received.filter((q) => q.method === 'PUT').length === putsBefore + 2);
    const puts = mx.received.filter((q) => q.method === 'PUT').slice(putsBefore);
    expect(puts[1].path).toBe(puts[0].path);
    expect(mx.events, 'the room got the alert twice').toHaveLength(1);

    await eventually('every open delivery recorded', async () => {
      const all = await Promise.all(Object.values(ids).map((id) => w.call('GET', `/admin/api/notifiers/${id}/deliveries`)));
      return all.every((d: Array<{ ok: boolean }>) => d.some((a) => a.ok));
    });
    expect(await w.d.stop()).toBe(0);
    w = worldOf(await startDaemon({ dataDir, args: ARGS }), w.target);

    mx.throttle(1, 1);
    w.target.status = 200;
    await w.check(r.id);
    await eventually(
      'the resolve, the close and the room message',
      () => pd.events.length === 2 && og.events.length === 2 && mx.events.length === 2,
    );
    expect(pd.events.map((e) => [e.event_action, e.dedup_key])).toEqual([
      ['trigger', key],
      ['resolve', key],
    ]);
    expect(pd.events[1]).toEqual({ routing_key: ROUTING_KEY, event_action: 'resolve', dedup_key: key });
    expect(og.events.map((e) => [e.op, e.alias])).toEqual([
      ['create', key],
      ['close', key],
    ]);
    expect(og.events[1].body).toMatchObject({ source: 'monctl', note: expect.stringContaining(`${NAME} is UP again`) });
    // Good news is a notice (silent under the default push rules), waited for as the body's retry_after_ms asked.
    expect(mx.events[1].content.msgtype).toBe('m.notice');
    const throttled = mx.log.findIndex((l) => l.status === 429);
    expect(mx.log[throttled + 1].at - mx.log[throttled].at).toBeGreaterThanOrEqual(1000);
    expect([...pd.refusals, ...og.refusals, ...mx.refusals]).toEqual([]);
  }, 60_000);
});
