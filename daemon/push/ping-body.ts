import type { IncomingMessage } from 'node:http';
import { HttpError } from '../../src/errors.ts';
import { MAX_PING_BODY_BYTES } from '../../src/api/schemas/push.ts';

/**
 * A ping's body (docs/API.md#push-checks): the first MAX_PING_BODY_BYTES are kept, the rest is
 * read and dropped up to MAX_PING_UPLOAD_BYTES (a job's log may run a little long), and past
 * that the ping is refused (413) and the connection closed rather than read on. A slow body is
 * bounded by the listeners' request timeout (`--request-timeout`, HTTP/2 streams included).
 */
export const MAX_PING_UPLOAD_BYTES = 1024 * 1024;

export interface PingBody {
  /** The kept bytes as UTF-8 text (invalid bytes and NULs replaced by U+FFFD); null when none came. */
  text: string | null;
  /** The bytes kept. */
  bytes: number;
  truncated: boolean;
}

export const NO_BODY: PingBody = { text: null, bytes: 0, truncated: false };

export function uploadTooLarge(): HttpError {
  return new HttpError(
    413,
    'payload-too-large',
    `A ping body may be at most ${MAX_PING_UPLOAD_BYTES} bytes (the first ${MAX_PING_BODY_BYTES} are kept)`,
    {
      headers: { Connection: 'close' },
    },
  );
}

/** Reads a POST body; throws 413 (and stops reading) past MAX_PING_UPLOAD_BYTES. */
export async function readPingBody(req: IncomingMessage): Promise<PingBody> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > MAX_PING_UPLOAD_BYTES) throw uploadTooLarge();
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let total = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > MAX_PING_UPLOAD_BYTES) throw uploadTooLarge();
    if (keptBytes < MAX_PING_BODY_BYTES) {
      const part = chunk.subarray(0, MAX_PING_BODY_BYTES - keptBytes);
      kept.push(part);
      keptBytes += part.length;
    }
  }
  if (total === 0) return NO_BODY;
  return { text: textOf(Buffer.concat(kept, keptBytes)), bytes: keptBytes, truncated: total > keptBytes };
}

/**
 * UTF-8 with invalid bytes replaced; NUL, which PostgreSQL's text refuses, too. A multi-byte
 * character cut at the limit becomes one replacement character.
 */
export function textOf(bytes: Buffer): string {
  return bytes.toString('utf8').replaceAll('\0', '\uFFFD');
}
