import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError } from '../../src/errors.ts';
import type { Logger } from '../logger.ts';
import { NO_SPACE_CODES, StorageError } from '../store/storage-error.ts';

/**
 * The daemon's one error boundary: whatever a handler throws ends up here and
 * leaves as RFC 9457 problem+json. Anything that is not an HttpError is a bug:
 * it is logged with its stack and the client sees a bare 500 without details.
 * Storage conditions are the server's, not the client's: 507 for a full disk,
 * 503 for a corrupt database (logged with advice where health learns of them)
 * or one that cannot be reached (PostgreSQL).
 */
export function toHttpError(err: unknown, log?: Logger): HttpError {
  if (err instanceof HttpError) return err;
  const storage = storageProblem(err);
  if (storage) return storage;
  const code = (err as { code?: unknown })?.code;
  if (code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE' || (err as Error)?.message === 'aborted') {
    return new HttpError(400, 'client-aborted', 'The client closed the connection');
  }
  if (err instanceof URIError) return new HttpError(400, 'bad-uri', 'Malformed percent-encoding in the URL');
  log?.error({ err }, 'unhandled error');
  return new HttpError(500, 'internal', 'Internal server error');
}

function storageProblem(err: unknown): HttpError | undefined {
  const found =
    err instanceof StorageError ? err : (err as Error)?.cause instanceof StorageError ? ((err as Error).cause as StorageError) : undefined;
  const code = found?.code ?? (err as { code?: unknown })?.code;
  if (found?.kind === 'full' || (typeof code === 'string' && NO_SPACE_CODES.has(code))) {
    return new HttpError(
      507,
      'storage-full',
      `The server's storage is full (${String(code)}): the change was not saved. ` +
        'Reads still work; writes work again once the administrator frees space',
      { extensions: { cause: code } },
    );
  }
  if (found?.kind === 'corrupt') {
    return new HttpError(
      503,
      'storage-corrupt',
      `The server's database is damaged (${found.code}): this could not be read. ` + 'The administrator has been told to check it',
      { extensions: { cause: found.code } },
    );
  }
  if (found?.kind === 'unavailable') {
    return new HttpError(503, 'storage-unavailable', `The server's database cannot be reached (${found.code}): try again shortly`, {
      extensions: { cause: found.code },
      headers: { 'Retry-After': '5' },
    });
  }
  return undefined;
}

export function sendProblem(req: IncomingMessage, res: ServerResponse, err: unknown, log?: Logger): void {
  const error = toHttpError(err, log);
  if (res.headersSent || res.destroyed) {
    res.destroy();
    return;
  }
  const instance = (req.url ?? '/').split('?')[0];
  const body = JSON.stringify(error.toProblem(instance));
  res.writeHead(error.status, {
    ...error.headers,
    'Content-Type': 'application/problem+json',
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': 'no-store',
  });
  res.end(body);
}

export function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  sendJsonText(res, status, JSON.stringify(value), headers);
}

export function sendJsonText(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...headers, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * A whole HTTP/1.1 response carrying a problem, for sockets that never became
 * a request (malformed request line, oversized headers, header timeout).
 */
export function rawProblemResponse(err: NodeJS.ErrnoException): string {
  const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const title = status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request';
  const body = JSON.stringify({
    type: 'urn:monctl:problem:bad-request',
    title,
    status,
    detail: 'The request could not be parsed',
    instance: '/',
  });
  return `HTTP/1.1 ${status} ${title}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}
