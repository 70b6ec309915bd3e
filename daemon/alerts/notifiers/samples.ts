import type { AlertItem, AlertKind, OutgoingMessage } from '../types.ts';

/**
 * The sample alerts of `POST /admin/api/notifiers/{id}/test {event}` and of the preview
 * (docs/API.md#notifiers): one alert of the kind asked for, about made-up subjects
 * (`example-api`, agent `example-office`, certificate `api.example.com`), all with id 0, which no
 * real resource, agent, certificate or incident has. The message is still a test (`test: true`).
 */
const MINUTE = 60_000;
const DAY = 86_400_000;
/** Added to a sample certificate's days left: rendered a moment after it was made, 10 days must still read as 10. */
const SLACK_MS = 3_600_000;

const API = { type: 'resource', id: 0, name: 'example-api', target: 'https://api.example.com/health' } as const;
const OFFICE = { type: 'agent', id: 0, name: 'example-office', target: '203.0.113.7' } as const;
const HTTP_503 = { message: 'HTTP 503 Service Unavailable', errorCode: '503' };
const AGENT_GONE = { message: 'agent disconnected', errorCode: 'AGENT_DISCONNECTED' };

export function sampleItem(kind: AlertKind, now: number): AlertItem {
  const base = { kind, eventId: 0, at: now, reminder: false, severity: 'critical' as const, cert: null };
  const opened = now - 12 * MINUTE;
  switch (kind) {
    case 'INCIDENT_OPENED':
      return { ...base, subject: { ...API }, incidentId: 0, openedAt: opened, resolvedAt: null, cause: { ...HTTP_503 } };
    case 'INCIDENT_RESOLVED':
      return { ...base, subject: { ...API }, incidentId: 0, openedAt: opened, resolvedAt: now, cause: { ...HTTP_503 } };
    case 'AGENT_DOWN':
      return { ...base, subject: { ...OFFICE }, incidentId: 0, openedAt: opened, resolvedAt: null, cause: { ...AGENT_GONE } };
    case 'AGENT_UP':
      return { ...base, subject: { ...OFFICE }, incidentId: 0, openedAt: opened, resolvedAt: now, cause: { ...AGENT_GONE } };
    case 'CERT_EXPIRING':
      return {
        ...base,
        subject: { ...API },
        incidentId: null,
        openedAt: null,
        resolvedAt: null,
        cause: null,
        cert: { notAfter: now + 10 * DAY + SLACK_MS, thresholdDays: 14 },
      };
    case 'CERT_RENEWAL_FAILED':
      return {
        ...base,
        subject: { type: 'certificate', id: 0, name: 'api.example.com', target: null },
        incidentId: null,
        openedAt: null,
        resolvedAt: null,
        cause: { message: 'the ACME server refused the order: rateLimited', errorCode: 'ACME_ORDER_FAILED' },
        cert: { notAfter: now + 5 * DAY + SLACK_MS, thresholdDays: 5 },
      };
  }
}

/** A test message: the sample alert of `event`, or none (the plain test message). */
export function testMessage(id: string, event: AlertKind | undefined, now: number): OutgoingMessage {
  return { id, items: event ? [sampleItem(event, now)] : [], test: true };
}
