import type { IncomingMessage } from 'node:http';
import { badRequest, HttpError } from '../../src/errors.ts';
import { decodeUtf8Body, parseQueryStrict, refuseLoneSurrogates } from './well-formed.ts';

export const MAX_BODY_BYTES = 1024 * 1024;

const tooLarge = (limit: number) => new HttpError(413, 'payload-too-large', `Request body exceeds ${limit} bytes`);

/** Reads the whole body, refusing (413) as soon as it passes the limit. */
export async function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume(); // drain so the connection can answer
    throw tooLarge(limit);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      req.resume();
      throw tooLarge(limit);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

function mediaType(req: IncomingMessage): string {
  return (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
}

export function isJson(req: IncomingMessage): boolean {
  const type = mediaType(req);
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

/** No body at all: no content type, no chunked framing, no bytes declared. */
export function bodyAbsent(req: IncomingMessage): boolean {
  return !req.headers['content-type'] && !req.headers['transfer-encoding'] && Number(req.headers['content-length'] ?? 0) === 0;
}

/** A JSON body: 415 when it is not declared JSON, 400 naming `body` when it does not parse. */
export async function readJson(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<unknown> {
  if (!isJson(req)) {
    req.resume();
    // No body at all (`curl -X POST` without data) is a missing body, not a wrong media type.
    if (bodyAbsent(req)) throw badRequest('Request body is required', [{ field: 'body', message: 'is required' }]);
    throw new HttpError(415, 'unsupported-media-type', 'Request body must be application/json');
  }
  // Strict: invalid UTF-8 and lone surrogates are refused, not turned into U+FFFD.
  const text = decodeUtf8Body(await readBody(req, limit));
  if (text.trim() === '') throw badRequest('Request body is empty', [{ field: 'body', message: 'is required' }]);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const message = `is not valid JSON: ${(err as Error).message}`;
    throw badRequest(`Request body ${message}`, [{ field: 'body', message }]);
  }
  refuseLoneSurrogates(text, value);
  return value;
}

/** An `application/x-www-form-urlencoded` body, for the login form. */
export async function readForm(req: IncomingMessage, limit = 16 * 1024): Promise<URLSearchParams> {
  const type = mediaType(req);
  if (type !== 'application/x-www-form-urlencoded') {
    req.resume();
    throw new HttpError(415, 'unsupported-media-type', 'Form must be application/x-www-form-urlencoded');
  }
  return new URLSearchParams(parseQueryStrict(decodeUtf8Body(await readBody(req, limit)), 'form'));
}
