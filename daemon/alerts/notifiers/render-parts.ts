import { formatDateTime } from '../../../src/time.ts';
import type { AlertItem } from '../types.ts';

/** The small pieces every rendered message is made of: categories, durations, times, causes, links. */
export type Category = 'down' | 'agentDown' | 'certExpiring' | 'certRenewalFailed' | 'recovered' | 'agentUp';

/** Bad news first: the order of sections and of the summary. */
export const CATEGORY_ORDER: readonly Category[] = ['down', 'agentDown', 'certExpiring', 'certRenewalFailed', 'recovered', 'agentUp'];
export const GOOD_NEWS: ReadonlySet<Category> = new Set(['recovered', 'agentUp']);

/** [singular, plural] as the count's noun ("3 resources down"), and the short form of a mixed summary ("3 down"). */
export const LABELS: Record<Category, { one: string; many: string; short: [string, string]; section: string }> = {
  down: { one: 'resource down', many: 'resources down', short: ['down', 'down'], section: 'Down' },
  agentDown: { one: 'agent down', many: 'agents down', short: ['agent down', 'agents down'], section: 'Agents down' },
  certExpiring: {
    one: 'certificate expiring',
    many: 'certificates expiring',
    short: ['certificate expiring', 'certificates expiring'],
    section: 'Certificates expiring',
  },
  certRenewalFailed: {
    one: 'certificate renewal failed',
    many: 'certificate renewals failed',
    short: ['renewal failed', 'renewals failed'],
    section: 'Certificate renewals failed',
  },
  recovered: { one: 'resource recovered', many: 'resources recovered', short: ['recovered', 'recovered'], section: 'Recovered' },
  agentUp: { one: 'agent back', many: 'agents back', short: ['agent back', 'agents back'], section: 'Agents back' },
};

export function categoryOf(item: AlertItem): Category {
  const agent = item.subject.type === 'agent';
  switch (item.kind) {
    case 'INCIDENT_OPENED':
      return agent ? 'agentDown' : 'down';
    case 'INCIDENT_RESOLVED':
      return agent ? 'agentUp' : 'recovered';
    case 'AGENT_DOWN':
      return 'agentDown';
    case 'AGENT_UP':
      return 'agentUp';
    case 'CERT_EXPIRING':
      return 'certExpiring';
    case 'CERT_RENEWAL_FAILED':
      return 'certRenewalFailed';
  }
}

/** `45 s`, `12 min`, `3 h 5 min`, `2 d 4 h`. */
export function humanDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min`;
  const h = Math.floor(min / 60);
  if (h < 48) return min % 60 ? `${h} h ${min % 60} min` : `${h} h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d} d ${h % 24} h` : `${d} d`;
}

const ZONE = process.env.TZ || 'UTC';

/** `2026-11-21 09:30:00 UTC`, in the daemon's zone like every date-time of the API. */
export function when(ms: number): string {
  return `${formatDateTime(ms).replace('T', ' ')} ${ZONE}`;
}

/** ISO 8601 in UTC, for machines (webhook bodies). */
export const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** How long the problem lasted (resolved) or has lasted so far (open); null when unknown. */
export function durationOf(item: AlertItem, now: number): number | null {
  if (item.openedAt === null) return null;
  return (item.resolvedAt ?? now) - item.openedAt;
}

/** `Connection refused (ECONNREFUSED)`, or null without a cause. */
export function causeText(item: AlertItem): string | null {
  const message = item.cause?.message?.trim() || null;
  const code = item.cause?.errorCode?.trim() || null;
  if (message && code && !message.includes(code)) return `${message} (${code})`;
  return message ?? code;
}

/**
 * Where a person can look at one item: the incident, else the resource or
 * agent, under `--public-url` (JSON in a logged-in browser); null without it.
 */
export function itemLink(item: AlertItem, publicUrl: string | null): string | null {
  if (!publicUrl) return null;
  if (item.incidentId !== null) return `${publicUrl}/admin/api/incidents/${item.incidentId}`;
  const collection = item.subject.type === 'agent' ? 'agents' : item.subject.type === 'certificate' ? 'certificates' : 'resources';
  return `${publicUrl}/admin/api/${collection}/${item.subject.id}`;
}

/** The link of a whole message: its one item's, or the incident list for several. */
export function messageLink(items: AlertItem[], publicUrl: string | null): string | null {
  if (!publicUrl) return null;
  if (items.length === 0) return `${publicUrl}/`;
  if (items.length === 1) return itemLink(items[0], publicUrl);
  return `${publicUrl}/admin/api/incidents`;
}

/** `a, b, c`, at most `max` names then `… and 8 more`. */
export function nameList(names: string[], max: number): string {
  if (names.length <= max) return names.join(', ');
  return `${names.slice(0, max).join(', ')}, … and ${names.length - max} more`;
}

/** "and 20 dependent resources (api-1, api-2, …)": the dependents held back because of an item (docs/API.md#dependencies); null when none. */
export function dependentsText(item: AlertItem): string | null {
  const d = item.dependents;
  if (!d || d.count === 0) return null;
  const more = d.count - d.names.length;
  return `and ${d.count} dependent resource${d.count === 1 ? '' : 's'} (${d.names.join(', ')}${more > 0 ? `, … and ${more} more` : ''})`;
}
