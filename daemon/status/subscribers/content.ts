import type { Kysely, Selectable } from 'kysely';
import type {
  Database,
  PostedImpact,
  PostedState,
  StatusIncidentsTable,
  StatusIncidentUpdatesTable,
  StatusMaintenanceNoticesTable,
  StatusSubscribersTable,
  SubscriberDeliveriesTable,
} from '../../store/schema.ts';
import { noticeIdOf } from './fan-out.ts';
import type { SubscriberTokens } from './tokens.ts';

/** Everything one delivery says, read when it is sent (a retry says the same: the rows it reads do not change). */
export interface DeliveryContent {
  delivery: Selectable<SubscriberDeliveriesTable>;
  kind: 'CONFIRM' | 'INCIDENT_UPDATE' | 'MAINTENANCE';
  subscriber: Selectable<StatusSubscribersTable>;
  page: { id: number; slug: string; title: string; emailNotifierId: number | null };
  incident?: Selectable<StatusIncidentsTable>;
  update?: Selectable<StatusIncidentUpdatesTable>;
  notice?: Selectable<StatusMaintenanceNoticesTable> & { startsAt: number | null; endsAt: number | null };
  /** The message's frozen payload (what the writer put there). */
  payload: Record<string, unknown>;
  links: Links;
}

/** The reader's links, from --public-url; all null without it. */
export interface Links {
  page: string | null;
  confirm: string | null;
  unsubscribe: string | null;
}

/** The delivery `id` with what it says, or undefined when its message or subscriber is gone (deleted since). */
export async function loadContent(
  db: Kysely<Database>,
  id: number,
  tokens: SubscriberTokens,
  publicUrl: string | undefined,
): Promise<DeliveryContent | undefined> {
  const delivery = await db.selectFrom('subscriber_deliveries').selectAll().where('id', '=', id).executeTakeFirst();
  if (!delivery) return undefined;
  const [message, subscriber] = await Promise.all([
    db.selectFrom('subscriber_messages').selectAll().where('id', '=', delivery.message_id).executeTakeFirst(),
    db.selectFrom('status_subscribers').selectAll().where('id', '=', delivery.subscriber_id).executeTakeFirst(),
  ]);
  if (!message || !subscriber) return undefined;
  const page = await db
    .selectFrom('status_pages')
    .select(['id', 'slug', 'title', 'email_notifier_id'])
    .where('id', '=', message.page_id)
    .executeTakeFirst();
  if (!page) return undefined;
  const payload = parse(message.payload);
  const content: DeliveryContent = {
    delivery,
    kind: message.kind as DeliveryContent['kind'],
    subscriber,
    page: { id: page.id, slug: page.slug, title: page.title, emailNotifierId: page.email_notifier_id },
    payload,
    links: linksOf(publicUrl, page.slug, tokens, subscriber),
  };
  if (message.kind === 'INCIDENT_UPDATE') {
    content.incident = await db
      .selectFrom('status_incidents')
      .selectAll()
      .where('id', '=', message.incident_id ?? 0)
      .executeTakeFirst();
    content.update = await db
      .selectFrom('status_incident_updates')
      .selectAll()
      .where('id', '=', message.update_id ?? 0)
      .executeTakeFirst();
    if (!content.incident || !content.update) return undefined;
    content.incident = { ...content.incident, ...frozenIncident(payload.incident) };
  } else if (message.kind === 'MAINTENANCE') {
    const notice = await db
      .selectFrom('status_maintenance_notices as n')
      .innerJoin('maintenance_windows as w', 'w.id', 'n.window_id')
      .selectAll('n')
      .select(['w.starts_at as startsAt', 'w.ends_at as endsAt'])
      .where('n.id', '=', noticeIdOf(payload) || 0)
      .executeTakeFirst();
    if (notice) content.notice = notice;
    else if (typeof payload.title !== 'string') return undefined;
  }
  return content;
}

/**
 * Links under --public-url (trailing slashes dropped): the page, and the subscriber's own
 * confirm and unsubscribe links (HMAC tokens, daemon/status/subscribers/tokens.ts).
 */
function linksOf(publicUrl: string | undefined, slug: string, tokens: SubscriberTokens, s: { id: number; token_nonce: string }): Links {
  if (!publicUrl) return { page: null, confirm: null, unsubscribe: null };
  const page = `${publicUrl.replace(/\/+$/, '')}/status/${encodeURIComponent(slug)}`;
  return {
    page,
    confirm: `${page}/subscribe/confirm?token=${tokens.make('confirm', s)}`,
    unsubscribe: `${page}/unsubscribe?token=${tokens.make('unsubscribe', s)}`,
  };
}

function parse(json: string): Record<string, unknown> {
  try {
    const v = JSON.parse(json) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * The incident as it stood when the update was posted, frozen in the payload by the incidents API
 * (`{incident: {title, impact, state}}`): a mail sent late, or retried, still says what the update
 * said, not what the incident became since. Fields that are not strings are ignored.
 */
function frozenIncident(value: unknown): Partial<{ title: string; impact: PostedImpact; state: PostedState }> {
  const v = (value ?? {}) as Record<string, unknown>;
  const out: Partial<{ title: string; impact: PostedImpact; state: PostedState }> = {};
  if (typeof v.title === 'string') out.title = v.title;
  if (typeof v.impact === 'string') out.impact = v.impact as PostedImpact;
  if (typeof v.state === 'string') out.state = v.state as PostedState;
  return out;
}
