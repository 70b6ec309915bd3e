import { randomUUID } from 'node:crypto';
import { type Answer, type Receiver, type Received, startReceiver } from './receivers.ts';

/**
 * Loopback stand-ins for PagerDuty and Opsgenie (and the base of matrix-receiver.ts), written from
 * their public API documentation; each checks what the real one checks and answers in its own shapes:
 * - PagerDuty Events API v2: https://developer.pagerduty.com/docs/events-api-v2/trigger-events/
 *   and https://developer.pagerduty.com/docs/events-api-v2/resolve-events/ (202 `{status, message,
 *   dedup_key}`, 400 `{status: "invalid event", message, errors}`, 429 when throttled).
 * - Opsgenie Alert API: https://docs.opsgenie.com/docs/alert-api (create `POST /v2/alerts`,
 *   close `POST /v2/alerts/{identifier}/close?identifierType=alias`, `Authorization: GenieKey …`,
 *   202 `{result, took, requestId}`, errors `{message, took, requestId}`, 422 with `errors`).
 * `throttle(n)` answers the next n requests 429 (with Retry-After where the provider sends it).
 */
export interface ProviderReceiver<E> extends Receiver {
  /** What the provider accepted, in order. */
  events: E[];
  /** What it refused, with why. */
  refusals: string[];
  /** When each request came (epoch ms) and what it was answered. */
  log: Array<{ at: number; status: number }>;
  throttle(times: number, retryAfterSeconds: number): void;
}

export const json = (status: number, body: unknown, headers: Record<string, string> = {}): Answer => ({
  status,
  body: JSON.stringify(body),
  headers: { 'content-type': 'application/json', ...headers },
});

/** A receiver whose handler answers unless a throttle is pending; refusals are kept with their reason. */
export async function provider<E>(
  handle: (r: Received, accept: (e: E) => void, refuse: (why: string, answer: Answer) => Answer) => Answer,
  throttled: (retryAfterSeconds: number) => Answer,
): Promise<ProviderReceiver<E>> {
  const events: E[] = [];
  const refusals: string[] = [];
  const log: Array<{ at: number; status: number }> = [];
  let throttles: number[] = [];
  const receiver = await startReceiver((r) => {
    const answer = throttles.length
      ? throttled(throttles.shift()!)
      : handle(
          r,
          (e) => events.push(e),
          (why, refusal) => (refusals.push(why), refusal),
        );
    log.push({ at: Date.now(), status: answer.status });
    return answer;
  });
  return Object.assign(receiver, {
    events,
    refusals,
    log,
    throttle: (times: number, seconds: number) => (throttles = [...throttles, ...Array(times).fill(seconds)]),
  });
}

const isString = (v: unknown, max: number) => typeof v === 'string' && v.length > 0 && v.length <= max;

/** A PagerDuty event as accepted: the action, the key, and the trigger's payload. */
export interface PagerDutyEvent {
  event_action: 'trigger' | 'acknowledge' | 'resolve';
  dedup_key: string;
  payload?: {
    summary: string;
    source: string;
    severity: string;
    timestamp?: string;
    component?: string;
    group?: string;
    class?: string;
    custom_details?: Record<string, unknown>;
  };
  links?: Array<{ href: string; text?: string }>;
  client?: string;
  client_url?: string;
}

/** What the Events API v2 refuses in an event (its `errors`). */
function pagerDutyErrors(e: Record<string, any>, routingKey: string): string[] {
  const errors: string[] = [];
  if (typeof e.routing_key !== 'string' || e.routing_key.length !== 32)
    errors.push("Length of 'routing_key' is incorrect (should be 32 characters)");
  else if (e.routing_key !== routingKey) errors.push("'routing_key' is not a valid integration key");
  if (!['trigger', 'acknowledge', 'resolve'].includes(e.event_action))
    errors.push("'event_action' is invalid (must be trigger, acknowledge or resolve)");
  if (e.dedup_key !== undefined && !isString(e.dedup_key, 255)) errors.push("'dedup_key' must be a string of at most 255 characters");
  if (e.event_action !== 'trigger') {
    if (e.dedup_key === undefined) errors.push("'dedup_key' is missing and is required for acknowledge and resolve");
    return errors;
  }
  const p = e.payload;
  if (!p || typeof p !== 'object') return [...errors, "'payload' is missing or not an object"];
  if (!isString(p.summary, 1024)) errors.push("'payload.summary' is missing, empty or longer than 1024 characters");
  if (!isString(p.source, 255)) errors.push("'payload.source' is missing or empty");
  if (!['critical', 'error', 'warning', 'info'].includes(p.severity))
    errors.push("'payload.severity' is invalid (critical, error, warning, info)");
  if (p.timestamp !== undefined && Number.isNaN(Date.parse(p.timestamp))) errors.push("'payload.timestamp' is not ISO 8601");
  for (const f of ['component', 'group', 'class'])
    if (p[f] !== undefined && typeof p[f] !== 'string') errors.push(`'payload.${f}' must be a string`);
  if (p.custom_details !== undefined && (typeof p.custom_details !== 'object' || Array.isArray(p.custom_details)))
    errors.push("'payload.custom_details' must be an object");
  if (e.links !== undefined && (!Array.isArray(e.links) || !e.links.every((l: any) => typeof l?.href === 'string')))
    errors.push("'links' must be an array of {href, text}");
  return errors;
}

/** PagerDuty's `POST /v2/enqueue`: the routing key is in the body, not a header. */
export function startPagerDutyReceiver(routingKey: string): Promise<ProviderReceiver<PagerDutyEvent>> {
  return provider<PagerDutyEvent>(
    (r, accept, refuse) => {
      if (r.method !== 'POST' || r.path !== '/v2/enqueue') return refuse(`${r.method} ${r.path}`, { status: 404, body: 'Not Found' });
      if (!/^application\/json/.test(String(r.headers['content-type'])))
        return refuse('content-type', json(400, { status: 'invalid event', message: 'Event object is invalid', errors: ['Content-Type'] }));
      let e: Record<string, any>;
      try {
        e = JSON.parse(r.body);
      } catch {
        return refuse('json', json(400, { status: 'invalid event', message: 'Event object is invalid', errors: ['Malformed JSON'] }));
      }
      const errors = pagerDutyErrors(e, routingKey);
      if (errors.length)
        return refuse(errors.join('; '), json(400, { status: 'invalid event', message: 'Event object is invalid', errors }));
      const dedup_key = e.dedup_key ?? randomUUID().replace(/-/g, '');
      accept({ ...e, dedup_key } as PagerDutyEvent);
      return json(202, { status: 'success', message: 'Event processed', dedup_key });
    },
    (seconds) =>
      json(
        429,
        { status: 'throttle event', message: 'Requests for this service are arriving too quickly. Please retry later.' },
        { 'retry-after': String(seconds) },
      ),
  );
}

/** An Opsgenie request as accepted. */
export interface OpsgenieRequest {
  op: 'create' | 'close';
  /** The alias: the body's on create, the path's on close. */
  alias: string;
  body: Record<string, any>;
}

/** What the create endpoint refuses (422's `errors`). */
function opsgenieErrors(b: Record<string, any>): Record<string, string> {
  const errors: Record<string, string> = {};
  if (!isString(b.message, 130)) errors.message = 'Message can not be empty and can be at most 130 characters.';
  if (b.alias !== undefined && !isString(b.alias, 512)) errors.alias = 'Alias can be at most 512 characters.';
  if (b.description !== undefined && (typeof b.description !== 'string' || b.description.length > 15000))
    errors.description = 'Description can be at most 15000 characters.';
  if (b.priority !== undefined && !['P1', 'P2', 'P3', 'P4', 'P5'].includes(b.priority))
    errors.priority = 'Priority should be one of [P1, P2, P3, P4, P5]';
  if (b.tags !== undefined && (!Array.isArray(b.tags) || b.tags.length > 20 || !b.tags.every((t: unknown) => isString(t, 50))))
    errors.tags = 'Tags can be at most 20, each at most 50 characters.';
  if (b.details !== undefined) {
    const map = typeof b.details === 'object' && b.details !== null && !Array.isArray(b.details);
    const values: Array<[string, unknown]> = map ? Object.entries(b.details) : [];
    if (!map || !values.every(([, v]) => typeof v === 'string')) errors.details = 'Details must be a map of strings.';
    else if (values.reduce((n, [k, v]) => n + k.length + String(v).length, 0) > 8000)
      errors.details = 'Details can be at most 8000 characters.';
  }
  if (b.entity !== undefined && (typeof b.entity !== 'string' || b.entity.length > 512))
    errors.entity = 'Entity can be at most 512 characters.';
  if (b.source !== undefined && !isString(b.source, 100)) errors.source = 'Source can be at most 100 characters.';
  return errors;
}

/** Opsgenie's Alert API: create and close by alias, the key in `Authorization: GenieKey …`. */
export function startOpsgenieReceiver(apiKey: string): Promise<ProviderReceiver<OpsgenieRequest>> {
  const meta = () => ({ took: 0.01, requestId: randomUUID() });
  return provider<OpsgenieRequest>(
    (r, accept, refuse) => {
      if (r.headers.authorization !== `GenieKey ${apiKey}`)
        return refuse('authorization', json(401, { message: 'Could not authenticate', ...meta() }));
      const url = new URL(r.path, 'http://x');
      const close = /^\/v2\/alerts\/([^/]+)\/close$/.exec(url.pathname);
      if (r.method !== 'POST' || (url.pathname !== '/v2/alerts' && !close))
        return refuse(`${r.method} ${r.path}`, json(404, { message: 'Not found', ...meta() }));
      let body: Record<string, any>;
      try {
        body = r.body ? JSON.parse(r.body) : {};
      } catch {
        return refuse('json', json(400, { message: 'Could not parse the request body', ...meta() }));
      }
      if (close) {
        if (url.searchParams.get('identifierType') !== 'alias')
          return refuse('identifierType', json(404, { message: 'Alert not found', ...meta() }));
        if (body.note !== undefined && (typeof body.note !== 'string' || body.note.length > 25000))
          return refuse('note', json(422, { message: 'Request body is not processable.', errors: { note: 'too long' }, ...meta() }));
        accept({ op: 'close', alias: decodeURIComponent(close[1]), body });
      } else {
        const errors = opsgenieErrors(body);
        if (Object.keys(errors).length)
          return refuse(
            JSON.stringify(errors),
            json(422, { message: 'Request body is not processable. Please check the errors.', errors, ...meta() }),
          );
        accept({ op: 'create', alias: body.alias ?? '', body });
      }
      return json(202, { result: 'Request will be processed', ...meta() });
    },
    (seconds) =>
      json(
        429,
        { message: 'You are making too many requests! To avoid errors, we recommend you limit requests.', ...meta() },
        { 'retry-after': String(seconds) },
      ),
  );
}
