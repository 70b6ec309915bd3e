import { describe, expect, it } from 'vitest';
import { when } from '../../daemon/alerts/notifiers/render-parts.ts';
import { renderMessage } from '../../daemon/alerts/notifiers/render.ts';
import type { AlertItem, AlertKind, OutgoingMessage } from '../../daemon/alerts/types.ts';

/**
 * The one rendering every notifier type uses: what a person reads in the email
 * subject, the ntfy title, the Slack text. Pure function, real inputs.
 */
const NOW = Date.UTC(2026, 10, 21, 10, 0, 0);
const MIN = 60_000;
const PUBLIC = 'https://monctl.example.test';
let nextEvent = 1;

function item(kind: AlertKind, name: string, over: Partial<AlertItem> = {}): AlertItem {
  const agent = kind === 'AGENT_DOWN' || kind === 'AGENT_UP';
  return {
    kind,
    eventId: nextEvent++,
    at: NOW,
    reminder: false,
    incidentId: 40 + nextEvent,
    subject: { type: agent ? 'agent' : 'resource', id: nextEvent, name, target: agent ? '203.0.113.7' : `https://${name}.example.test/` },
    openedAt: NOW - 12 * MIN,
    resolvedAt: kind === 'INCIDENT_RESOLVED' || kind === 'AGENT_UP' ? NOW - 2 * MIN : null,
    cause: { message: 'HTTP 503 Service Unavailable', errorCode: '503' },
    cert: null,
    severity: 'critical',
    ...over,
  } as AlertItem;
}
const message = (items: AlertItem[], test = false): OutgoingMessage => ({ id: 'msg_1', items, test });
const render = (m: OutgoingMessage, publicUrl: string | null = PUBLIC) => renderMessage(m, { publicUrl, now: NOW, notifierName: 'ops' });

describe('one alert', () => {
  it('DOWN names the resource, target, cause, duration and links the incident', () => {
    const down = item('INCIDENT_OPENED', 'web', { incidentId: 5 });
    const r = render(message([down]));
    expect(r.title).toBe('DOWN: web');
    expect(r.tone).toBe('problem');
    expect(r.text.split('\n')).toEqual([
      'web is DOWN.',
      'Target: https://web.example.test/',
      'Cause: HTTP 503 Service Unavailable',
      `Since: ${when(NOW - 12 * MIN)} (12 min)`, // 2026-11-21 09:48:00 UTC in the daemon's zone
      `Details: ${PUBLIC}/admin/api/incidents/5`,
    ]);
    expect(r.link).toBe(`${PUBLIC}/admin/api/incidents/5`);
  });

  it('UP says how long it was down', () => {
    const r = render(message([item('INCIDENT_RESOLVED', 'web')]));
    expect(r.title).toBe('UP: web');
    expect(r.tone).toBe('recovery');
    expect(r.text).toMatch(/^web is UP again after 10 min\.\n/);
    expect(r.text).toContain(`Down from ${when(NOW - 12 * MIN)} to ${when(NOW - 2 * MIN)}.`);
  });

  it('a reminder says so', () => {
    const r = render(message([item('INCIDENT_OPENED', 'web', { reminder: true, openedAt: NOW - 245 * MIN })]));
    expect(r.title).toBe('Still DOWN: web');
    expect(r.text).toMatch(/^web is still DOWN \(reminder\)\./);
    expect(r.text).toContain('(4 h 5 min)');
  });

  it('an agent, and a certificate', () => {
    expect(render(message([item('AGENT_DOWN', 'office', { cause: { message: 'connection lost', errorCode: null } })])).text).toMatch(
      /^Agent office is DISCONNECTED\.\nAddress: 203\.0\.113\.7\nCause: connection lost/,
    );
    const cert = render(
      message([item('CERT_EXPIRING', 'shop', { incidentId: null, cert: { notAfter: NOW + 7 * 24 * 60 * MIN + MIN, thresholdDays: 7 } })]),
    );
    expect(cert.title).toBe('Certificate expires in 7 days: shop');
    expect(cert.link).toMatch(/\/admin\/api\/resources\/\d+$/);
  });

  it('a failed ACME order for the HTTPS edge names the hostname, the cause and the certificate still served', () => {
    const failed = item('CERT_RENEWAL_FAILED', 'shop.example.test', {
      incidentId: null,
      openedAt: null,
      subject: { type: 'certificate', id: 9, name: 'shop.example.test', target: null },
      cause: { message: 'Connection refused', errorCode: 'ACME_ORDER_FAILED' },
      cert: { notAfter: NOW + 20 * 24 * 60 * MIN, thresholdDays: 20 },
    });
    const r = render(message([failed]));
    expect(r.title).toBe('Certificate renewal failed: shop.example.test');
    expect(r.tone).toBe('problem');
    expect(r.text.split('\n')).toEqual([
      'The ACME order for shop.example.test on the HTTPS edge failed; it is retried with backoff.',
      'Cause: Connection refused (ACME_ORDER_FAILED)',
      `The certificate served now expires in 20 days (${when(NOW + 20 * 24 * 60 * MIN)}).`,
      `Details: ${PUBLIC}/admin/api/certificates/9`,
    ]);
    const grouped = render(message([failed, item('INCIDENT_OPENED', 'web')]));
    expect(grouped.title).toBe('1 down, 1 renewal failed');
    expect(grouped.summary).toMatchObject({ down: 1, certRenewalFailed: 1 });
  });

  it('without --public-url there is no link', () => {
    const r = render(message([item('INCIDENT_OPENED', 'web')]), null);
    expect(r.link).toBeNull();
    expect(r.text).not.toContain('Details');
  });
});

describe('grouped alerts', () => {
  it('names at most 20 and counts the rest', () => {
    const items = Array.from({ length: 28 }, (_, i) => item('INCIDENT_OPENED', `r${i + 1}`));
    const r = render(message(items));
    expect(r.title).toBe('28 resources down');
    const lines = r.text.split('\n');
    expect(lines[0]).toBe(`28 resources down: ${Array.from({ length: 20 }, (_, i) => `r${i + 1}`).join(', ')}, … and 8 more`);
    expect(r.text).not.toMatch(/\br21\b/);
    expect(lines.filter((l) => l.startsWith('- r'))).toHaveLength(20);
    expect(lines).toContain('- … and 8 more');
    expect(lines).toContain('- r1 (https://r1.example.test/): HTTP 503 Service Unavailable, down for 12 min');
    expect(lines.at(-1)).toBe(`Details: ${PUBLIC}/admin/api/incidents`);
    expect(r.summary).toMatchObject({ down: 28, recovered: 0 });
  });

  it('summarises mixed kinds, bad news first', () => {
    const r = render(
      message([
        item('INCIDENT_RESOLVED', 'a'),
        item('INCIDENT_OPENED', 'b'),
        item('INCIDENT_OPENED', 'c'),
        item('INCIDENT_RESOLVED', 'd'),
        item('INCIDENT_OPENED', 'e'),
      ]),
    );
    expect(r.title).toBe('3 down, 2 recovered');
    expect(r.text.split('\n').slice(0, 2)).toEqual(['3 resources down: b, c, e', '2 resources recovered: a, d']);
    expect(r.text).toContain('Recovered:\n- a (https://a.example.test/): back after 10 min');
  });

  it('shares the 20 names between kinds', () => {
    const items = [
      ...Array.from({ length: 19 }, (_, i) => item('INCIDENT_OPENED', `d${i}`)),
      item('AGENT_DOWN', 'office'),
      item('AGENT_DOWN', 'lab'),
    ];
    const r = render(message(items));
    expect(r.title).toBe('19 down, 2 agents down');
    expect(r.text.split('\n')[1]).toBe('2 agents down: office, … and 1 more');
  });

  it('all reminders: the title says so', () => {
    const r = render(message([item('INCIDENT_OPENED', 'a', { reminder: true }), item('INCIDENT_OPENED', 'b', { reminder: true })]));
    expect(r.title).toBe('Reminder: 2 resources down');
    expect(r.text).toContain('- a (https://a.example.test/): HTTP 503 Service Unavailable, still down for 12 min');
  });
});

describe('a test message', () => {
  it('says it is a test, names the notifier, links the daemon', () => {
    const r = render(message([], true));
    expect(r).toMatchObject({ title: 'monctl test notification', tone: 'test', link: `${PUBLIC}/` });
    expect(r.text).toMatch(/^This is a test message from monctl through notifier "ops"\./);
  });
});
