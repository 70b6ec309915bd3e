import type { Severity } from '../../../../src/notifier-fields.ts';
import type { OutgoingMessage, SendOutcome } from '../../types.ts';
import type { Channel } from '../channel.ts';
import type { LoadedNotifier } from '../config-types.ts';
import { type PostOptions, postJson } from '../http-post.ts';
import type { RenderedMessage } from '../render.ts';
import { cut, type PagerEvent, pagerEvents, sendEvents } from './pager-events.ts';
import { answerOf, baseUrl } from './api-base.ts';

/**
 * PAGERDUTY: Events API v2 (https://developer.pagerduty.com/docs/events-api-v2/trigger-events/).
 * Every alert of a message is one event on `/v2/enqueue`: INCIDENT_OPENED (and a reminder, which
 * PagerDuty adds to the same alert's log) triggers with `dedup_key` = the incident id,
 * INCIDENT_RESOLVED resolves that key. Resending an event PagerDuty already accepted is harmless
 * (it deduplicates by key), so a grouped message whose third event failed is retried whole.
 */
export const PAGERDUTY_API = 'https://events.pagerduty.com';

/** The Events API's limit on `summary`. */
const MAX_SUMMARY = 1024;

/** The severity PagerDuty shows; `error` exists there but monctl has no such level. */
function severityOf(e: PagerEvent): Severity {
  // A certificate about to expire is a warning whatever rule sent it: nothing is down yet.
  return e.item.kind === 'CERT_EXPIRING' ? 'warning' : e.item.severity;
}

/** The request body of one event (a resolve carries only the key: the rest is the trigger's). */
export function pagerdutyBody(routingKey: string, e: PagerEvent): Record<string, unknown> {
  if (e.action === 'resolve') return { routing_key: routingKey, event_action: 'resolve', dedup_key: e.key };
  const { item } = e;
  return {
    routing_key: routingKey,
    event_action: 'trigger',
    dedup_key: e.key,
    payload: {
      summary: cut(e.own.title, MAX_SUMMARY),
      source: item.subject.target ?? item.subject.name,
      severity: severityOf(e),
      timestamp: new Date(item.at).toISOString(),
      component: item.subject.name,
      group: item.subject.type,
      class: item.kind,
      custom_details: {
        details: e.own.text,
        cause: item.cause?.message ?? null,
        errorCode: item.cause?.errorCode ?? null,
        openedAt: item.openedAt === null ? null : new Date(item.openedAt).toISOString(),
        reminder: item.reminder,
        ...(item.dependents ? { dependents: item.dependents } : {}),
        ...(e.link ? { link: e.link } : {}),
      },
    },
    ...(e.link ? { links: [{ href: e.link, text: 'monctl' }] } : {}),
    client: 'monctl',
    ...(e.link ? { client_url: e.link } : {}),
  };
}

/** PagerDuty's refusal `{status, message, errors}` says more than the first bytes of it. */
function inspect(status: number, text: string, outcome: SendOutcome): SendOutcome {
  const json = answerOf<Record<string, unknown>>(text);
  if (outcome.ok || !json || typeof json.message !== 'string') return outcome;
  const errors = Array.isArray(json.errors) ? `: ${json.errors.join('; ')}` : '';
  return { ...outcome, error: cut(`HTTP ${status}: ${json.message}${errors}`, 500) };
}

function send(n: LoadedNotifier, message: OutgoingMessage, rendered: RenderedMessage, io: PostOptions): Promise<SendOutcome> {
  const url = `${n.config.apiUrl ?? PAGERDUTY_API}/v2/enqueue`;
  const post = (body: Record<string, unknown>) => postJson(url, JSON.stringify(body), {}, io, { inspect });
  if (message.test) return sendTest(n.secrets.routingKey!, message, rendered, post);
  return sendEvents(pagerEvents(message, rendered), (e) => post(pagerdutyBody(n.secrets.routingKey!, e)));
}

/** A test: an info alert under a key of its own, resolved at once, so that nobody stays paged. */
async function sendTest(
  routingKey: string,
  message: OutgoingMessage,
  rendered: RenderedMessage,
  post: (body: Record<string, unknown>) => Promise<SendOutcome>,
): Promise<SendOutcome> {
  const dedup_key = `test-${message.id}`;
  const trigger = await post({
    routing_key: routingKey,
    event_action: 'trigger',
    dedup_key,
    payload: {
      summary: cut(rendered.title, MAX_SUMMARY),
      source: 'monctl',
      severity: 'info',
      timestamp: new Date().toISOString(),
      class: 'TEST',
      custom_details: { details: rendered.text },
    },
    client: 'monctl',
    ...(rendered.link ? { client_url: rendered.link } : {}),
  });
  if (!trigger.ok) return trigger;
  const resolve = await post({ routing_key: routingKey, event_action: 'resolve', dedup_key });
  return { ...resolve, latencyMs: trigger.latencyMs + resolve.latencyMs };
}

export const pagerduty: Channel = {
  // Every field is a JSON string that PagerDuty shows as text.
  escape: (text) => text,
  check(_flat, out, err) {
    // "Length of 'routing_key' is incorrect (should be 32 characters)", PagerDuty answers otherwise.
    if (!/^[\x21-\x7e]{32}$/.test(out.secrets.routingKey!)) err('routingKey', 'must be the 32 characters of an integration key');
    if (out.config.apiUrl !== undefined) out.config.apiUrl = baseUrl(out.config.apiUrl, 'apiUrl', err);
  },
  send,
};
