import http from 'node:http';
import http2, { type ServerHttp2Session } from 'node:http2';
import https from 'node:https';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import {
  AGENT_VERSION_HEADER, backoffDelay, GOAWAY_REPLACED, MAX_FRAME_SIZE, PING_INTERVAL_MS, PING_TIMEOUT_MS, SESSION_MAX_MEMORY_MB,
  SESSION_WINDOW, STREAM_WINDOW, TUNNEL_PATH, TUNNEL_UPGRADE,
} from '../../src/tunnel/protocol.ts';
import { VERSION } from '../../src/version.ts';
import { createStreamHandler, type ServeOptions } from './serve.ts';

export interface AgentOptions extends ServeOptions {
  server: string;
  /** Read before every dial, so a token file updated after a rotation is picked up. */
  token: () => string;
}

/** Why the dial loop ended. */
export type AgentExit = 'stopped' | 'replaced';

/** A dial refused by the daemon (401, 503, …): worth logging, then retried with backoff. */
class DialRefused extends Error {
  readonly status: number;
  constructor(status: number, detail: string) {
    super(detail);
    this.status = status;
  }
}

/**
 * `monctl agent`: keeps one tunnel to the daemon. Dials `GET /admin/tunnel`
 * (HTTP/1.1 Upgrade), then serves HTTP/2 on the upgraded socket; redials with
 * exponential backoff and jitter (1 s to 30 s) whenever the tunnel drops.
 */
export class TunnelAgent {
  readonly #opts: AgentOptions;
  readonly #log: Logger;
  readonly #server: http2.Http2Server;
  #session: ServerHttp2Session | undefined;
  #stopping = false;
  #wake: (() => void) | undefined;

  constructor(opts: AgentOptions) {
    this.#opts = opts;
    this.#log = opts.log;
    this.#server = http2.createServer({
      settings: { initialWindowSize: STREAM_WINDOW, maxFrameSize: MAX_FRAME_SIZE, maxConcurrentStreams: 10_000 },
      maxSessionMemory: SESSION_MAX_MEMORY_MB,
    });
    this.#server.on('stream', createStreamHandler(opts));
  }

  /** Runs until stop() or until another agent with the same token takes over. */
  async run(): Promise<AgentExit> {
    let attempt = 0;
    while (!this.#stopping) {
      try {
        const session = await this.#dial();
        attempt = 0;
        const replaced = await this.#serve(session);
        if (replaced) {
          this.#log.error('another agent connected with the same token and replaced this one; exiting');
          return 'replaced';
        }
      } catch (err) {
        const e = err as NodeJS.ErrnoException & { status?: number };
        this.#log.error({ status: e.status, code: e.code, error: e.message }, 'tunnel: dial failed');
      }
      if (this.#stopping) break;
      const delay = backoffDelay(attempt++);
      this.#log.info({ delayMs: delay }, 'tunnel: reconnecting');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        this.#wake = () => { clearTimeout(timer); resolve(); };
      });
      this.#wake = undefined;
    }
    return 'stopped';
  }

  /** Upgrades a connection to the daemon and starts serving h2 on it. */
  #dial(): Promise<ServerHttp2Session> {
    const url = new URL(TUNNEL_PATH, this.#opts.server);
    const client = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const req = client.request(url, {
        method: 'GET',
        headers: {
          Connection: 'Upgrade', Upgrade: TUNNEL_UPGRADE, Authorization: `Bearer ${this.#opts.token()}`,
          [AGENT_VERSION_HEADER]: VERSION,
        },
        timeout: 10_000,
      });
      req.on('timeout', () => req.destroy(new Error('daemon did not answer within 10 s')));
      req.on('error', reject);
      req.on('response', (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => { if (body.length < 4096) body += c; });
        res.on('end', () => {
          let detail = body;
          try { detail = JSON.parse(body).detail ?? body; } catch { /* not problem+json */ }
          reject(new DialRefused(res.statusCode ?? 0, `daemon answered ${res.statusCode}: ${detail}`));
        });
      });
      req.on('upgrade', (_res, socket: Socket, head) => {
        socket.setTimeout(0);
        socket.setNoDelay(true);
        socket.setKeepAlive(true, 10_000);
        if (head.length) socket.unshift(head);
        this.#server.once('session', (session: ServerHttp2Session) => resolve(session));
        this.#server.emit('connection', socket);
      });
      req.end();
    });
  }

  /** Serves one session until it closes; resolves true when the daemon said another agent replaced it. */
  #serve(session: ServerHttp2Session): Promise<boolean> {
    this.#session = session;
    let replaced = false;
    this.#log.info({ server: this.#opts.server }, 'tunnel: connected');
    session.once('remoteSettings', () => {
      try { session.setLocalWindowSize(SESSION_WINDOW); } catch { /* closed meanwhile */ }
    });
    session.on('goaway', (_code, _last, data?: Buffer) => {
      const reason = data?.toString() ?? '';
      if (reason === GOAWAY_REPLACED) replaced = true;
      this.#log.warn({ reason }, 'tunnel: daemon closing the session');
    });
    session.on('error', (err) => this.#log.warn({ error: err.message }, 'tunnel: session error'));
    const timer = setInterval(() => {
      if (session.destroyed || session.closed) return;
      const deadline = setTimeout(() => {
        this.#log.warn('tunnel: keepalive timeout, dropping the session');
        session.destroy(new Error('keepalive timeout'));
      }, PING_TIMEOUT_MS);
      if (!session.ping(() => clearTimeout(deadline))) clearTimeout(deadline);
    }, PING_INTERVAL_MS);
    return new Promise((resolve) => {
      session.once('close', () => {
        clearInterval(timer);
        this.#session = undefined;
        this.#log.info('tunnel: disconnected');
        resolve(replaced);
      });
    });
  }

  /** SIGTERM: no new dial; let in-flight streams finish (graceMs at most), then close. */
  async stop(graceMs = 5_000): Promise<void> {
    this.#stopping = true;
    this.#wake?.();
    const session = this.#session;
    if (!session || session.destroyed) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => session.destroy(new Error('shutdown grace period over')), graceMs);
      session.once('close', () => { clearTimeout(timer); resolve(); });
      session.close();
    });
  }
}
