import type { HistoryEntry } from '../../src/api/schemas/monitoring.ts';
import type { PushView } from '../../src/api/schemas/push.ts';
import type { Column, View } from '../output/render.ts';

/**
 * How `resources get` and `history` show a push check (docs/API.md#push-checks): its ping URLs,
 * schedule and latest ping, and each ping of the history with its kind, exit code, source, run
 * time and the first bytes of its body.
 */

/** The daemon gives `/ping/{uuid}` unless its publicUrl is set: made absolute with the server the CLI talks to. */
export function absoluteUrl(server: string, url: string): string {
  return url.startsWith('/') ? `${server.replace(/\/+$/, '')}${url}` : url;
}

/** The push view with its URLs absolute (what a person copies into a crontab). */
export function withAbsoluteUrls<T extends { push?: PushView | null }>(server: string, r: T): T {
  if (!r.push) return r;
  const { pingUrl, slugUrl } = r.push;
  return { ...r, push: { ...r.push, pingUrl: absoluteUrl(server, pingUrl), slugUrl: slugUrl && absoluteUrl(server, slugUrl) } };
}

/** `86400` → `1d`, `5400` → `1h30m`, `0` → `0s`: the flags' own syntax back. */
export function formatSeconds(total: number): string {
  if (total === 0) return '0s';
  const parts: string[] = [];
  let rest = total;
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3600],
    ['m', 60],
    ['s', 1],
  ] as const) {
    if (rest >= size) parts.push(`${Math.floor(rest / size)}${unit}`);
    rest %= size;
  }
  return parts.join('');
}

/** `every 1d` or `cron 0 3 * * * (Europe/Berlin)`. */
export function scheduleText(p: PushView): string {
  return p.cron !== null ? `cron ${p.cron} (${p.timezone ?? 'UTC'})` : `every ${formatSeconds(p.periodSeconds ?? 86_400)}`;
}

type WithPush = { push?: PushView | null };

/** The detail lines of `resources get` (a push check only; `-` elsewhere is left out by the view). */
export const pushColumns: Column<WithPush>[] = [
  { header: 'PING URL', get: (r) => r.push?.pingUrl, detail: true },
  { header: 'SLUG URL', get: (r) => (r.push ? (r.push.slugUrl ?? 'none (no ping key)') : undefined), detail: true },
  { header: 'SCHEDULE', get: (r) => r.push && scheduleText(r.push), detail: true },
  { header: 'GRACE', get: (r) => r.push && formatSeconds(r.push.graceSeconds), detail: true },
  {
    header: 'LAST PING',
    get: (r) => r.push && (r.push.lastPingAt ? `${r.push.lastPingAt} (${r.push.lastPingKind})` : 'never'),
    detail: true,
  },
  { header: 'STARTED', get: (r) => r.push?.startedAt, detail: true },
  { header: 'LATE AT', get: (r) => r.push?.lateAt, detail: true },
];

/** A body preview on one line, short enough for a table cell. */
function preview(body: string | null, bytes: number): string | undefined {
  if (body === null || bytes === 0) return undefined;
  const line = body.replace(/\s+/g, ' ').trim();
  return line.length > 40 ? `${line.slice(0, 37)}...` : line;
}

/** The ping columns of a history page that holds pings (a push check's). */
export const pingColumns: Column<HistoryEntry>[] = [
  { header: 'KIND', get: (h) => h.ping?.kind },
  { header: 'EXIT', get: (h) => h.ping?.exitCode },
  { header: 'SOURCE', get: (h) => h.ping?.sourceIp },
  { header: 'RUN MS', get: (h) => h.ping?.runMs },
  { header: 'BODY', get: (h) => h.ping && preview(h.ping.body, h.ping.bodyBytes) },
  { header: 'USER AGENT', get: (h) => h.ping?.userAgent, wide: true },
  {
    header: 'BODY BYTES',
    get: (h) => (h.ping ? `${h.ping.bodyBytes}${h.ping.bodyTruncated ? ' (cut at 100 KiB)' : ''}` : undefined),
    wide: true,
  },
];

/** The history view for these entries: with the ping columns when any entry is a ping. */
export function historyViewFor(entries: HistoryEntry[], base: View<HistoryEntry>): View<HistoryEntry> {
  if (!entries.some((e) => e.ping)) return base;
  // A ping has no check duration worth a column (its run time is RUN MS); the rest stays.
  return { columns: [...base.columns.filter((c) => c.header !== 'MS' && c.header !== 'LOCATION'), ...pingColumns] };
}
