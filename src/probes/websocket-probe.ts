/**
 * WEBSOCKET checks (docs/API.md#check-types): the opening handshake to a `ws://` or `wss://` URL
 * with the resource's headers, an optional text message sent once open, and, only when a
 * condition reads [BODY], the first message received; then a proper close.
 */
import type { TLSSocket } from 'node:tls';
import type WebSocketClient from 'ws';
import { describeError, WEBSOCKET_ERROR } from './errors.ts';
import { conclude, type Outcome, type ProtocolProbe } from './protocol-probe.ts';
import { tlsFailure } from './tls-failure.ts';
import type { WebSocketOptions } from './types.ts';

type WsClass = typeof WebSocketClient;

let loading: Promise<WsClass> | undefined;

/** `ws` loads with the first WEBSOCKET check: start-up and the CLI do not pay for it. */
function loadWs(): Promise<WsClass> {
  loading ??= import('ws').then((m) => (m as { default?: WsClass }).default ?? (m as unknown as WsClass));
  return loading;
}

/**
 * The largest first message read for [BODY]: 64 KiB, not the HTTP checks' `--max-body-bytes`
 * (1 MiB), because a WebSocket message arrives whole in memory before it can be looked at, and a
 * check waits for one message, not a document. A larger one fails its [BODY] conditions as an
 * HTTP body over the cap does.
 */
export const MAX_MESSAGE_BYTES = 64 * 1024;

/** Once the check has its answer, how long the close handshake may take before the socket is cut. */
const CLOSE_GRACE_MS = 1_000;

/** How a check ended. */
type End =
  | { kind: 'open' }
  | { kind: 'message'; body: string }
  | { kind: 'too-big' }
  | { kind: 'refused'; status: string }
  | { kind: 'failed'; err: unknown }
  | { kind: 'broken'; problem: string };

export const probeWebSocket: ProtocolProbe<WebSocketOptions> = async (target, options, ctx) => {
  const url = URL.parse(target);
  if (!url || (url.protocol !== 'ws:' && url.protocol !== 'wss:')) {
    return { status: 'NOT_AVAILABLE', message: `invalid WEBSOCKET target "${target}"`, errorCode: 'CONNECTION_ERROR' };
  }
  const WebSocket = await loadWs();
  const waitsForMessage = ctx.conditions?.needsBody ?? false;
  return new Promise((resolve) => {
    const started = performance.now();
    const ws = new WebSocket(url, {
      headers: options.headers,
      handshakeTimeout: ctx.timeoutMs,
      rejectUnauthorized: !ctx.skipTLS,
      maxPayload: MAX_MESSAGE_BYTES,
      perMessageDeflate: false,
      followRedirects: false,
    });
    let opened = false;
    let done = false;
    let responseTimeMs = 0;
    let ip: string | null = null;
    let certNotAfter: number | undefined;
    const timer = setTimeout(() => {
      finish(
        opened
          ? { kind: 'broken', problem: `no message within ${ctx.timeoutMs} ms` }
          : { kind: 'failed', err: new Error(`timeout after ${ctx.timeoutMs} ms`) },
      );
    }, ctx.timeoutMs);

    function finish(end: End) {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (ws.readyState === WebSocket.OPEN) {
        ws.close(1000);
        setTimeout(() => ws.terminate(), CLOSE_GRACE_MS).unref();
      } else ws.terminate();
      if (!opened) responseTimeMs = performance.now() - started;
      const outcome = verdictOf(end, target, ctx.timeoutMs);
      if (certNotAfter !== undefined) outcome.certNotAfter = certNotAfter;
      const observation = {
        connected: opened,
        responseTimeMs,
        ip,
        body: end.kind === 'message' ? end.body : null,
        bodyTruncated: end.kind === 'too-big',
        certificateExpiresInMs: certNotAfter === undefined ? null : certNotAfter - Date.now(),
      };
      resolve(conclude(ctx, outcome, observation, opened));
    }

    ws.on('upgrade', (res) => {
      const socket = res.socket as TLSSocket;
      ip = socket.remoteAddress ?? null;
      const notAfter = socket.getPeerCertificate?.()?.valid_to;
      if (notAfter) certNotAfter = Date.parse(notAfter);
    });
    ws.on('unexpected-response', (req, res) => {
      ip = res.socket?.remoteAddress ?? null;
      finish({ kind: 'refused', status: `${res.statusCode} ${res.statusMessage ?? ''}`.trim() });
      req.destroy();
    });
    ws.on('open', () => {
      opened = true;
      responseTimeMs = performance.now() - started;
      if (options.send !== null) ws.send(options.send);
      if (!waitsForMessage) finish({ kind: 'open' });
    });
    ws.on('message', (data: Buffer | ArrayBuffer | Buffer[]) => {
      const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as Buffer);
      finish({ kind: 'message', body: bytes.toString('utf8') });
    });
    ws.on('error', (err: Error & { code?: string }) => {
      if (err.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') finish({ kind: 'too-big' });
      else finish(opened ? { kind: 'broken', problem: err.message } : { kind: 'failed', err });
    });
    ws.on('close', (code: number) =>
      finish({ kind: 'broken', problem: `the server closed the connection (${code}) before sending a message` }),
    );
  });
};

function verdictOf(end: End, target: string, timeoutMs: number): Outcome {
  switch (end.kind) {
    case 'open':
    case 'message':
    case 'too-big':
      return { status: 'AVAILABLE', message: `WebSocket open (${target})`, errorCode: null };
    case 'refused':
      return { status: 'NOT_AVAILABLE', message: `upgrade refused: ${end.status}`, errorCode: WEBSOCKET_ERROR };
    case 'broken':
      return { status: 'NOT_AVAILABLE', message: end.problem, errorCode: WEBSOCKET_ERROR };
    case 'failed': {
      const tls = tlsFailure(end.err);
      if (tls) return { status: 'NOT_AVAILABLE', message: tls, errorCode: 'TLS_ERROR' };
      // Errno codes (ECONNREFUSED, ENOTFOUND) and timeouts: nothing was reached; anything else is the server breaking the handshake.
      const code = (end.err as { code?: unknown }).code;
      const unreached = (typeof code === 'string' && /^E[A-Z]+$/.test(code)) || /timed? ?out/i.test((end.err as Error).message ?? '');
      return unreached
        ? { status: 'NOT_AVAILABLE', message: describeError(end.err, timeoutMs), errorCode: 'CONNECTION_ERROR' }
        : { status: 'NOT_AVAILABLE', message: describeError(end.err), errorCode: WEBSOCKET_ERROR };
    }
  }
}
