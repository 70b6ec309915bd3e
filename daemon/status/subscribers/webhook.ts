import { postJson, type PostOptions } from '../../alerts/notifiers/http-post.ts';
import { iso } from '../../alerts/notifiers/render-parts.ts';
import { signWebhook } from '../../alerts/notifiers/signing.ts';
import type { SendOutcome } from '../../alerts/types.ts';
import type { DeliveryContent } from './content.ts';

/**
 * A WEBHOOK subscriber's delivery: a JSON POST signed per Standard Webhooks with the subscriber's
 * own secret, as notifier webhooks are signed with theirs. `webhook-id` is the delivery's key, the
 * same on every retry, so that a receiver drops a repeat. The body:
 * `{type: 'status.incident.updated' | 'status.maintenance.posted', timestamp, data}`.
 */
export function subscriberWebhookBody(c: DeliveryContent, now: number): string {
  const page = { id: c.page.id, slug: c.page.slug, title: c.page.title, url: c.links.page };
  if (c.kind === 'INCIDENT_UPDATE') {
    const i = c.incident!;
    const u = c.update!;
    return JSON.stringify({
      type: 'status.incident.updated',
      timestamp: iso(now),
      data: {
        page,
        incident: {
          id: i.id,
          title: i.title,
          impact: i.impact,
          state: i.state,
          createdAt: iso(i.created_at),
          resolvedAt: iso(i.resolved_at),
        },
        update: { id: u.id, state: u.state, message: u.message, messageHtml: u.message_html, createdAt: iso(u.created_at) },
      },
    });
  }
  const n = c.notice;
  return JSON.stringify({
    type: 'status.maintenance.posted',
    timestamp: iso(now),
    data: {
      page,
      notice: n
        ? {
            id: n.id,
            windowId: n.window_id,
            title: n.title,
            message: n.message,
            messageHtml: n.message_html,
            startsAt: iso(n.startsAt),
            endsAt: iso(n.endsAt),
          }
        : { id: null, title: c.payload.title, message: c.payload.message ?? '' },
    },
  });
}

export function sendSubscriberWebhook(c: DeliveryContent, secret: string, io: PostOptions): Promise<SendOutcome> {
  const now = Date.now();
  const body = subscriberWebhookBody(c, now);
  return postJson(c.subscriber.address, body, { ...signWebhook(secret, c.delivery.delivery_key, body, now) }, io);
}
