import type { AlertItem, OutgoingMessage, SendOutcome } from '../types.ts';
import type { LoadedNotifier } from './config-types.ts';
import { postJson, type PostOptions } from './http-post.ts';
import { durationOf, iso, itemLink } from './render-parts.ts';
import type { RenderedMessage } from './render.ts';
import { signWebhook } from './signing.ts';

/**
 * WEBHOOK: a JSON POST signed per Standard Webhooks. The body is
 * `{type: 'monctl.alert', timestamp, data}`: `data` has the rendered title and
 * text, and every alert as structured fields (times in ISO 8601 UTC). The
 * `webhook-id` is the message id, the same on every retry, so that a receiver
 * can drop a duplicate; the timestamp and signature are made per attempt.
 */
export function webhookBody(message: OutgoingMessage, rendered: RenderedMessage, publicUrl: string | null, now: number): string {
  return JSON.stringify({
    type: 'monctl.alert',
    timestamp: new Date(now).toISOString(),
    data: {
      messageId: message.id,
      test: message.test,
      title: rendered.title,
      text: rendered.text,
      link: rendered.link,
      summary: rendered.summary,
      items: message.items.map((item) => webhookItem(item, publicUrl, now)),
    },
  });
}

function webhookItem(item: AlertItem, publicUrl: string | null, now: number) {
  const lasted = durationOf(item, now);
  return {
    eventId: item.eventId,
    kind: item.kind,
    // The effective severity (a rule's override, else the resource's): what a pager would receive.
    severity: item.severity,
    at: iso(item.at),
    reminder: item.reminder,
    subject: item.subject,
    incidentId: item.incidentId,
    openedAt: iso(item.openedAt),
    resolvedAt: iso(item.resolvedAt),
    durationSeconds: lasted === null ? null : Math.round(lasted / 1000),
    cause: item.cause,
    cert: item.cert ? { notAfter: iso(item.cert.notAfter), thresholdDays: item.cert.thresholdDays } : null,
    link: itemLink(item, publicUrl),
  };
}

export function sendWebhook(
  n: LoadedNotifier,
  message: OutgoingMessage,
  rendered: RenderedMessage,
  publicUrl: string | null,
  io: PostOptions,
): Promise<SendOutcome> {
  const now = Date.now();
  const body = webhookBody(message, rendered, publicUrl, now);
  const signed = signWebhook(n.secrets.signingSecret!, message.id, body, now);
  return postJson(n.config.url!, body, { ...n.secrets.headers, ...signed }, io);
}
