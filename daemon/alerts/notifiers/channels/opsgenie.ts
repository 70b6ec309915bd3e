import type { Severity } from '../../../../src/notifier-fields.ts';
import type { OutgoingMessage, SendOutcome } from '../../types.ts';
import type { Channel } from '../channel.ts';
import type { LoadedNotifier, StoredConfig } from '../config-types.ts';
import { type PostOptions, postJson } from '../http-post.ts';
import type { RenderedMessage } from '../render.ts';
import { checkKey, cut, type PagerEvent, pagerEvents, sendEvents } from './pager-events.ts';
import { answerOf, baseUrl } from './api-base.ts';

/**
 * OPSGENIE: the Alert API (https://docs.opsgenie.com/docs/alert-api). An opening creates an alert
 * with `alias` = the incident id (Opsgenie keeps one open alert per alias and counts the
 * repeats, so a retry or a reminder does not page twice); a resolution closes it by alias.
 */
export const OPSGENIE_HOSTS = { US: 'https://api.opsgenie.com', EU: 'https://api.eu.opsgenie.com' } as const;

/** Where requests go: `apiUrl` when given, else the region's host (US by default). */
export function opsgenieBase(config: Pick<StoredConfig, 'apiUrl' | 'region'>): string {
  return config.apiUrl ?? OPSGENIE_HOSTS[config.region ?? 'US'];
}

const PRIORITIES: Record<Severity, string> = { critical: 'P1', warning: 'P3', info: 'P5' };

/** The API's limits (characters); `details` may hold 8,000 in all, and it has at most 8 keys. */
const MAX = { message: 130, alias: 512, description: 15_000, entity: 512, detail: 900 };

/** The create body of one event. `details` values must be strings. */
export function opsgenieCreate(e: PagerEvent): Record<string, unknown> {
  const { item } = e;
  // A certificate about to expire is a warning whatever rule sent it: nothing is down yet.
  const severity: Severity = item.kind === 'CERT_EXPIRING' ? 'warning' : item.severity;
  const details: Record<string, string> = { kind: item.kind, severity, subject: item.subject.type };
  if (item.subject.target) details.target = item.subject.target;
  if (item.cause?.message) details.cause = item.cause.message;
  if (item.cause?.errorCode) details.errorCode = item.cause.errorCode;
  if (item.openedAt !== null) details.openedAt = new Date(item.openedAt).toISOString();
  if (item.dependents) details.dependents = `${item.dependents.count}: ${item.dependents.names.join(', ')}`;
  if (e.link) details.link = e.link;
  for (const [k, v] of Object.entries(details)) details[k] = cut(v, MAX.detail);
  return {
    message: cut(e.own.title, MAX.message),
    alias: cut(e.key, MAX.alias),
    description: cut(e.own.text, MAX.description),
    priority: PRIORITIES[severity],
    source: 'monctl',
    tags: ['monctl', item.kind.toLowerCase(), severity],
    details,
    entity: cut(item.subject.name, MAX.entity),
  };
}

/** Opsgenie's refusal `{message, took, requestId}`: its message is what to show. */
function inspect(status: number, text: string, outcome: SendOutcome): SendOutcome {
  const json = answerOf<Record<string, unknown>>(text);
  if (outcome.ok || !json || typeof json.message !== 'string') return outcome;
  return { ...outcome, error: cut(`HTTP ${status}: ${json.message}`, 500) };
}

function send(n: LoadedNotifier, message: OutgoingMessage, rendered: RenderedMessage, io: PostOptions): Promise<SendOutcome> {
  const base = `${opsgenieBase(n.config)}/v2/alerts`;
  const headers = { authorization: `GenieKey ${n.secrets.apiKey}` };
  const post = (url: string, body: Record<string, unknown>) => postJson(url, JSON.stringify(body), headers, io, { inspect });
  const close = (alias: string, note: string) =>
    post(`${base}/${encodeURIComponent(alias)}/close?identifierType=alias`, { source: 'monctl', note: cut(note, 25_000) });
  if (message.test) return sendTest(message, rendered, base, post, close);
  return sendEvents(pagerEvents(message, rendered), (e) =>
    e.action === 'resolve' ? close(e.key, e.own.text) : post(base, opsgenieCreate(e)),
  );
}

/** A test: a P5 alert under an alias of its own, closed at once, so that nobody stays paged. */
async function sendTest(
  message: OutgoingMessage,
  rendered: RenderedMessage,
  base: string,
  post: (url: string, body: Record<string, unknown>) => Promise<SendOutcome>,
  close: (alias: string, note: string) => Promise<SendOutcome>,
): Promise<SendOutcome> {
  const alias = `test-${message.id}`;
  const created = await post(base, {
    message: cut(rendered.title, MAX.message),
    alias,
    description: cut(rendered.text, MAX.description),
    priority: 'P5',
    source: 'monctl',
    tags: ['monctl', 'test'],
  });
  if (!created.ok) return created;
  const closed = await close(alias, 'monctl test message: closed at once');
  return { ...closed, latencyMs: created.latencyMs + closed.latencyMs };
}

export const opsgenie: Channel = {
  // Every field is a JSON string that Opsgenie shows as text.
  escape: (text) => text,
  check(_flat, out, err) {
    checkKey(out.secrets.apiKey, 'apiKey', err);
    if (out.config.apiUrl !== undefined) out.config.apiUrl = baseUrl(out.config.apiUrl, 'apiUrl', err);
  },
  send,
};
