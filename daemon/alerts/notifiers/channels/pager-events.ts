import type { AlertItem, OutgoingMessage, SendOutcome } from '../../types.ts';
import { renderMessage, type RenderedMessage } from '../render.ts';

/**
 * What PAGERDUTY and OPSGENIE share: one provider event per alert of a message, keyed so that
 * the provider keeps one alert per incident (docs/API.md#notifiers), sent a few at a time, and
 * one outcome for the whole message.
 */

/** Requests in flight per message: a grouped message of 200 alerts must fit in one attempt's deadline. */
const PARALLEL = 4;

/** One provider event of a message: the key it is filed under and whether it opens or closes. */
export interface PagerEvent {
  key: string;
  action: 'trigger' | 'resolve';
  item: AlertItem;
  /** The item's own title and text (the message's, when it has this one item). */
  own: RenderedMessage;
  /** Where a person looks at it; null without `--public-url`. */
  link: string | null;
}

/** Events that end what an earlier one opened. */
const RESOLVING = new Set(['INCIDENT_RESOLVED', 'AGENT_UP']);

/**
 * The events of a message, in event order. The key is the incident id; alerts without an
 * incident (certificates) are keyed by their event, so each is its own provider alert.
 */
export function pagerEvents(message: OutgoingMessage, rendered: RenderedMessage): PagerEvent[] {
  return message.items.map((item) => ({
    key: item.incidentId !== null ? String(item.incidentId) : `event-${item.eventId}`,
    action: RESOLVING.has(item.kind) ? 'resolve' : 'trigger',
    item,
    // A grouped message's title and text are about all of its alerts: each event gets its own.
    own: message.items.length === 1 ? rendered : renderMessage({ ...message, items: [item] }),
    link: itemLinkOf(message, rendered, item),
  }));
}

/**
 * The link of one item: the message's when it has one item; in a grouped message the message
 * link is the incident list (render-parts.ts messageLink), under which each incident has its page.
 */
function itemLinkOf(message: OutgoingMessage, rendered: RenderedMessage, item: AlertItem): string | null {
  if (!rendered.link || message.items.length === 1) return rendered.link;
  return item.incidentId !== null ? `${rendered.link}/${item.incidentId}` : rendered.link;
}

/** At most `max` characters, with an ellipsis when cut. */
export const cut = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/**
 * Sends every event: events of one key in order (a trigger before its resolve), different keys
 * up to PARALLEL at a time. The message is delivered when every event was accepted; otherwise
 * the first failure is its outcome, retryable only if every failure is (a refused event will be
 * refused again), waiting as long as the longest Retry-After.
 */
export async function sendEvents(events: PagerEvent[], sendOne: (e: PagerEvent) => Promise<SendOutcome>): Promise<SendOutcome> {
  const started = performance.now();
  const chains = new Map<string, PagerEvent[]>();
  for (const e of events) chains.set(e.key, [...(chains.get(e.key) ?? []), e]);
  const queue = [...chains.values()];
  const failures: Array<{ e: PagerEvent; outcome: SendOutcome }> = [];
  let last: SendOutcome | undefined;
  await Promise.all(
    Array.from({ length: Math.min(PARALLEL, queue.length) }, async () => {
      for (let chain = queue.shift(); chain; chain = queue.shift()) {
        for (const e of chain) {
          const outcome = await sendOne(e);
          last = outcome;
          // The rest of this key waits for the next attempt: a resolve must not pass its trigger.
          if (!outcome.ok) {
            failures.push({ e, outcome });
            break;
          }
        }
      }
    }),
  );
  const latencyMs = Math.round(performance.now() - started);
  if (failures.length === 0) return { ...(last ?? { ok: true, statusCode: null, error: null, retryable: false }), latencyMs };
  const [{ e, outcome }] = failures;
  const waits = failures.map((f) => f.outcome.retryAfterMs).filter((w): w is number => w !== undefined);
  const retryable = failures.every((f) => f.outcome.retryable);
  return {
    ok: false,
    statusCode: outcome.statusCode,
    error: `${failures.length} of ${events.length} events failed; ${e.action} ${e.key}: ${outcome.error}`,
    latencyMs,
    retryable,
    ...(waits.length && retryable ? { retryAfterMs: Math.max(...waits) } : {}),
  };
}

/** A secret key: 1 to 256 printable characters without spaces (it goes in a header or a JSON string). */
export function checkKey(value: string | undefined, field: string, err: (field: string, message: string) => void): void {
  if (value !== undefined && !/^[\x21-\x7e]{1,256}$/.test(value)) err(field, 'must be 1 to 256 printable characters without spaces');
}
