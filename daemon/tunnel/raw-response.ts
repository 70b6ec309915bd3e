import type { Duplex } from 'node:stream';
import { HttpError, statusTitle } from '../../src/errors.ts';

/**
 * Writes a problem+json response straight to a socket, for upgrade requests
 * (agent dial, edge WebSocket) that never get a ServerResponse, then ends it.
 */
export function rawProblem(socket: Duplex, error: HttpError, instance: string): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify(error.toProblem(instance.split('?')[0]));
  const extra = Object.entries(error.headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.end(
    `HTTP/1.1 ${error.status} ${statusTitle(error.status)}\r\n` +
      'Content-Type: application/problem+json\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      `${extra}Connection: close\r\n\r\n${body}`,
  );
}

export const problem = (status: number, code: string, detail: string, headers?: Record<string, string>) =>
  new HttpError(status, code, detail, { headers });
