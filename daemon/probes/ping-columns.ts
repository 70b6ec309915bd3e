import { PING_BODY_PREVIEW_BYTES, type PingDetail } from '../../src/api/schemas/push.ts';

/**
 * A push check's ping as the history stores it (migration 0020; in `check_details` since 0029): its fields as JSON in
 * `check_details.ping`, its kept body apart in `ping_body`, so that history pages read a
 * preview of the body (`substr`), never all of it.
 */
export interface PingRecord {
  detail: Omit<PingDetail, 'body'>;
  /** The kept body as text (at most MAX_PING_BODY_BYTES of it), or null when it sent none. */
  body: string | null;
}

export function pingColumn(ping: PingRecord | undefined): string | null {
  return ping ? JSON.stringify(ping.detail) : null;
}

/** The body's first characters, as history lists show them. */
export function bodyPreview(body: string | null): string | null {
  return body === null ? null : body.slice(0, PING_BODY_PREVIEW_BYTES);
}

/** The entry's `ping` from its columns (the body column already cut to a preview, or whole). */
export function pingDetailOf(column: string | null, body: string | null): PingDetail | undefined {
  if (column === null) return undefined;
  try {
    return { ...(JSON.parse(column) as Omit<PingDetail, 'body'>), body: bodyPreview(body) };
  } catch {
    return undefined; // a damaged row shows as a plain entry rather than failing the page
  }
}
