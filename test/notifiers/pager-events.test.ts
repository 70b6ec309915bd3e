import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { matrix } from '../../daemon/alerts/notifiers/channels/matrix.ts';
import { opsgenieCreate } from '../../daemon/alerts/notifiers/channels/opsgenie.ts';
import { pagerEvents } from '../../daemon/alerts/notifiers/channels/pager-events.ts';
import { pagerduty, pagerdutyBody } from '../../daemon/alerts/notifiers/channels/pagerduty.ts';
import type { LoadedNotifier } from '../../daemon/alerts/notifiers/config-types.ts';
import { createNotifierDispatcher } from '../../daemon/alerts/notifiers/http-post.ts';
import { renderMessage } from '../../daemon/alerts/notifiers/render.ts';
import type { AlertItem, OutgoingMessage } from '../../daemon/alerts/types.ts';
import { startPagerDutyReceiver } from './pager-receivers.ts';

/**
 * The pagers' events without a daemon: what a grouped message becomes (one event per alert, a
 * trigger before the resolve of its key, each with its own link), severity as PagerDuty's and as
 * an Opsgenie priority, and one outcome for the message when an event is throttled. The sender
 * posts to the PagerDuty receiver of pager-receivers.ts (Events API v2 documentation cited there).
 */
const ROUTING_KEY = 'R0UT1NGKEY0123456789abcdefABCDEF';
const PUBLIC_URL = 'https://monctl.example.test';
const NAME = 'db_*[prod]*<b>&amp;`(1)';
let pd: Awaited<ReturnType<typeof startPagerDutyReceiver>>;
beforeAll(async () => {
  pd = await startPagerDutyReceiver(ROUTING_KEY);
});
afterAll(() => pd?.close());

describe('one event per alert', () => {
  const NOW = Date.parse('2026-11-28T09:00:00Z');
  const item = (i: number, extra: Partial<AlertItem> = {}): AlertItem => ({
    kind: 'INCIDENT_OPENED',
    severity: 'critical',
    eventId: 10 + i,
    at: NOW,
    reminder: false,
    incidentId: 40 + i,
    subject: { type: 'resource', id: i, name: `svc-${i}`, target: `https://svc-${i}.example.test/` },
    openedAt: NOW,
    resolvedAt: null,
    cause: { message: '503 Service Unavailable', errorCode: 'HTTP_STATUS' },
    cert: null,
    ...extra,
  });
  const message = (...items: AlertItem[]): OutgoingMessage => ({ id: 'msg_group', items, test: false });
  const events = (m: OutgoingMessage) => pagerEvents(m, renderMessage(m, { publicUrl: PUBLIC_URL }));

  it('a warning resource reaches PagerDuty as warning and Opsgenie as P3; an expiring certificate is a warning', () => {
    const [warning, cert] = events(
      message(
        item(1, { severity: 'warning' }),
        item(2, { kind: 'CERT_EXPIRING', incidentId: null, cert: { notAfter: NOW + 86_400_000 * 5, thresholdDays: 14 } }),
      ),
    );
    expect(pagerdutyBody(ROUTING_KEY, warning)).toMatchObject({
      dedup_key: '41',
      payload: { severity: 'warning', summary: 'DOWN: svc-1' },
    });
    expect(opsgenieCreate(warning)).toMatchObject({ alias: '41', priority: 'P3', tags: ['monctl', 'incident_opened', 'warning'] });
    expect(pagerdutyBody(ROUTING_KEY, cert)).toMatchObject({ dedup_key: 'event-12', payload: { severity: 'warning' } });
    expect(opsgenieCreate(cert)).toMatchObject({ alias: 'event-12', priority: 'P3' });
    expect(opsgenieCreate(events(message(item(3, { severity: 'info' })))[0]).priority).toBe('P5');
  });

  it('a grouped message sends each alert, a trigger before the resolve of its key, each with its own link', async () => {
    const pool = createNotifierDispatcher(2_000);
    const n: LoadedNotifier = {
      id: 1,
      name: 'pd',
      type: 'PAGERDUTY',
      enabled: true,
      config: { apiUrl: pd.url },
      secrets: { routingKey: ROUTING_KEY },
      titleTemplate: null,
      bodyTemplate: null,
    };
    const io = { dispatcher: pool, timeoutMs: 2_000, signal: new AbortController().signal };
    const m = message(item(1), item(2), item(1, { kind: 'INCIDENT_RESOLVED', eventId: 20, resolvedAt: NOW + 60_000 }));
    try {
      expect(await pagerduty.send(n, m, renderMessage(m, { publicUrl: PUBLIC_URL }), io)).toMatchObject({ ok: true, statusCode: 202 });
      expect(pd.events.filter((e) => e.dedup_key === '41').map((e) => e.event_action)).toEqual(['trigger', 'resolve']);
      expect(pd.events.find((e) => e.dedup_key === '42')).toMatchObject({
        payload: { summary: 'DOWN: svc-2' },
        links: [{ href: `${PUBLIC_URL}/admin/api/incidents/42` }],
      });
      // A throttled event fails the message (retryable, waiting as asked); the accepted ones are harmless to resend.
      pd.throttle(1, 7);
      expect(await pagerduty.send(n, m, renderMessage(m), io)).toMatchObject({
        ok: false,
        statusCode: 429,
        retryable: true,
        retryAfterMs: 7000,
        error: expect.stringMatching(/^1 of 3 events failed; trigger 4[12]: HTTP 429/),
      });
      // MATRIX escapes for its HTML: the channel's `escape` is what templates print variables with.
      expect(matrix.escape(NAME)).toBe('db_*[prod]*&lt;b&gt;&amp;amp;`(1)');
    } finally {
      await pool.close();
    }
  });
});
