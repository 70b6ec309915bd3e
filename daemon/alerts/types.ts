/**
 * The contracts inside the alerts capability, between the parts
 * that produce alert events (incidents, agents, certificates), the router and
 * dispatcher that group and deliver them, and the notifier senders.
 *
 *   check results ─┐
 *   agent status ──┼─> alert_events (outbox, same transaction) ─> router ─> notifications ─> dispatcher ─> sender
 *   certificates ──┘        (rules, grouping, inhibition)            (claims, retries)     (WEBHOOK, SLACK, NTFY, EMAIL)
 */

import { ALERT_EVENT_KINDS } from '../../src/api/schemas/alert-rules.ts';
import type { Severity } from '../../src/notifier-fields.ts';

/** The API's list: one list of event kinds for the schema, the daemon and the CLI. */
export const ALERT_KINDS = ALERT_EVENT_KINDS;
export type AlertKind = (typeof ALERT_KINDS)[number];

/**
 * What an alert is about. A certificate of the HTTPS edge (CERT_RENEWAL_FAILED,
 * an ACME order that failed) has no resource or agent: only rules that list none route it.
 */
export interface AlertSubject {
  type: 'resource' | 'agent' | 'certificate';
  id: number;
  name: string;
  /** The resource's target (URL, host:port, image reference); the agent's remote address if known. */
  target: string | null;
}

/** Incidents are about resources and agents; certificates only raise events. */
export type IncidentSubject = AlertSubject & { type: 'resource' | 'agent' };

/** The JSON kept in `alert_events.payload`: everything a message needs, frozen when the event happened. */
export interface AlertEventPayload {
  kind: AlertKind;
  subject: AlertSubject;
  incidentId: number | null;
  /** Epoch ms. */
  openedAt: number | null;
  resolvedAt: number | null;
  /** The first failing check's message and code (incidents), or why the agent went away. */
  cause: { message: string | null; errorCode: string | null } | null;
  /**
   * CERT_EXPIRING: the peer certificate's notAfter (epoch ms) and the threshold crossed, in days.
   * CERT_RENEWAL_FAILED: the notAfter of the certificate still served, and the whole days it has left.
   */
  cert: { notAfter: number; thresholdDays: number } | null;
  /**
   * The resource's severity when the event happened (INCIDENT_OPENED, CERT_EXPIRING); absent (events
   * before migration 0023, agents, certificates): critical. A resolution has none of its own: the
   * router gives it its opening's, so that a pager sees one severity per incident.
   */
  severity?: Severity;
}

/** One alert inside an outgoing message. */
export interface AlertItem extends AlertEventPayload {
  eventId: number;
  /** Epoch ms the event was recorded. */
  at: number;
  /** A repeat of an alert already sent, while its incident stays open. */
  reminder: boolean;
  /** What pagers receive: the routing rule's override, else the payload's severity, else critical. */
  severity: Severity;
  /**
   * INCIDENT_OPENED of a resource that others depend on: its dependents whose alerts are held
   * back (inhibited) because of it, counted when the message is built; absent when none.
   */
  dependents?: { count: number; names: string[] };
}

/** What the dispatcher hands to a sender: one message, possibly grouping many alerts. */
export interface OutgoingMessage {
  /** The Standard Webhooks `webhook-id`: stable across every retry of this message. */
  id: string;
  items: AlertItem[];
  /** `POST /admin/api/notifiers/{id}/test`. */
  test: boolean;
}

/** How one delivery attempt went. */
export interface SendOutcome {
  ok: boolean;
  /** The receiver's HTTP status, or the SMTP reply code. */
  statusCode: number | null;
  error: string | null;
  latencyMs: number;
  /** false: give up (a 4xx other than 408 and 429, a rejected recipient, a bad configuration). */
  retryable: boolean;
  /** The receiver asked to wait this long before the next attempt (429 `Retry-After`, Telegram's `retry_after`). */
  retryAfterMs?: number;
  /** Recorded with the attempt (the delivery log's `note`): why the templates were not used. */
  note?: string;
}
