/**
 * Reads a response body for conditions (docs/DECISIONS.md#probe-conditions): decoded from gzip,
 * deflate or br as it streams, and never past `cap` bytes, so a large or compressed-bomb body
 * costs at most the cap in memory. Only called when a condition reads `[BODY]`.
 */
import type { Readable, Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';

/** Most body bytes read for conditions unless `--max-body-bytes` says otherwise: 1 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** The body could not be decoded: the check's answer is wrong, not the connection. */
export class BodyDecodeError extends Error {
  constructor(encoding: string, cause: unknown) {
    super(`the body could not be decoded (${encoding}): ${(cause as Error)?.message ?? String(cause)}`);
    this.name = 'BodyDecodeError';
  }
}

function decoderFor(encoding: string): Transform | null {
  switch (encoding) {
    case 'gzip':
    case 'x-gzip':
      return createGunzip();
    case 'deflate':
      return createInflate();
    case 'br':
      return createBrotliDecompress();
    default:
      return null;
  }
}

export interface ReadBody {
  text: string;
  /** The body went past the cap: `text` is its first `cap` bytes. */
  truncated: boolean;
}

/**
 * The body as UTF-8 text, decoded per `content-encoding`. A network error while reading is thrown
 * as it is (the caller's CONNECTION_ERROR); a body that does not decode throws BodyDecodeError.
 */
export async function readBody(body: Readable, contentEncoding: string | string[] | undefined, cap: number): Promise<ReadBody> {
  const encoding = String(contentEncoding ?? '')
    .trim()
    .toLowerCase();
  const identity = encoding === '' || encoding === 'identity';
  const decoder = identity ? null : decoderFor(encoding);
  if (!identity && !decoder) throw new BodyDecodeError(encoding, new Error('unsupported content-encoding'));
  let sourceError: unknown;
  let source: AsyncIterable<Buffer> = body;
  if (decoder) {
    body.once('error', (err) => {
      sourceError = err;
      decoder.destroy(err);
    });
    body.pipe(decoder);
    source = decoder;
  }
  const chunks: Buffer[] = [];
  let total = 0;
  let truncated = false;
  try {
    for await (const chunk of source) {
      if (total + chunk.length > cap) {
        chunks.push(chunk.subarray(0, cap - total));
        total = cap;
        truncated = true;
        break;
      }
      chunks.push(chunk);
      total += chunk.length;
    }
  } catch (err) {
    if (decoder && sourceError === undefined) throw new BodyDecodeError(encoding, err);
    throw sourceError ?? err;
  } finally {
    // Stopped at the cap (or failed): drop the rest rather than read it.
    decoder?.destroy();
    if (truncated || !body.readableEnded) body.destroy();
  }
  return { text: Buffer.concat(chunks, total).toString('utf8'), truncated };
}
