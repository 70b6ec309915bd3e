import type { Logger } from 'pino';
import { MuxSession } from '../../src/tunnel/mux/session.ts';
import { keepalive } from '../../src/tunnel/mux/keepalive.ts';
import {
  AGENT_VERSION_HEADER,
  backoffDelay,
  GOAWAY_REPLACED,
  PING_INTERVAL_MS,
  PING_TIMEOUT_MS,
  sendWindowOf,
  STREAM_WINDOW_HEADER,
  TARGET_TIMEOUT_HEADER,
  TUNNEL_PATH,
  WINDOW_GROWTH_HEADER,
  TUNNEL_UPGRADE,
} from '../../src/tunnel/protocol.ts';
import { readCaFile, withDefaultRoots } from '../../src/tls/ca-file.ts';
import { explainCertificateFailure } from '../../src/tls/certificate-error.ts';
import { VERSION } from '../../src/version.ts';
import { formatProbesHeader, PROBE_PROTOCOL, PROBES_HEADER, probeVersionOf } from '../../src/tunnel/probe-protocol.ts';
import type { MuxStream } from '../../src/tunnel/mux/stream.ts';
import { DialRefused, dialUpgrade } from './dial.ts';
import { ProbeServer } from './probes.ts';
import { createStreamHandler, type ServeOptions } from './serve.ts';

export interface AgentOptions extends ServeOptions {
  server: string;
  /** Read before every dial, so a token file updated after a rotation is picked up. */
  token: () => string;
  /** A CA to trust for the daemon's certificate besides the default roots; read before every dial, like the token. */
  caFile?: string;
  /** Consecutive 401 answers to the dial after which run() gives up with 'rejected' (default 10). */
  maxAuthFailures?: number;
  /** Remote checks run at once (default 64). */
  probeConcurrency?: number;
  /** The probe protocol announced (default the current one; 0 acts as an agent from before remote checks). */
  probeProtocol?: number;
}

/** Why the dial loop ended. */
export type AgentExit = 'stopped' | 'replaced' | 'rejected';

/** What the user reads when the daemon keeps refusing the token. */
export const rejectedMessage = (times: number) =>
  `the daemon rejected the registration token ${times} time(s) in a row (401): it is wrong, was replaced or the agent was deleted. ` +
  'Generate a new one with `monctl agents token NAME --output-file FILE` and restart the agent with it';

/**
 * `monctl agent`: keeps one tunnel to the daemon. Dials `GET /admin/tunnel`
 * (HTTP/1.1 Upgrade), then serves the daemon's mux streams on the upgraded socket; redials with
 * exponential backoff and jitter (1 s to 30 s) whenever the tunnel drops.
 */
export class TunnelAgent {
  readonly #opts: AgentOptions;
  readonly #log: Logger;
  readonly #onStream: (stream: MuxStream, raw: unknown) => void;
  readonly #probes: ProbeServer;
  #session: MuxSession | undefined;
  #stopping = false;
  #wake: (() => void) | undefined;

  constructor(opts: AgentOptions) {
    this.#opts = opts;
    this.#log = opts.log;
    const relay = createStreamHandler(opts);
    const probeProtocol = opts.probeProtocol ?? PROBE_PROTOCOL;
    this.#probes = new ProbeServer({ concurrency: opts.probeConcurrency ?? 64, protocol: probeProtocol, log: opts.log });
    // A probe stream (a remote check) or a connection to relay. With no probe protocol the agent acts as
    // one from before remote checks: the relay refuses the probe's OPEN as a bad target.
    this.#onStream = (stream, raw) => {
      const version = probeProtocol > 0 ? probeVersionOf(raw) : undefined;
      if (version === undefined) relay(stream, raw);
      else this.#probes.serve(stream, version);
    };
  }

  /**
   * Runs until stop(), until another agent with the same token takes over, or until the daemon
   * has refused the token (401) maxAuthFailures times in a row: retrying a rejected token forever
   * would only hide the problem. Other refusals (503, …) and network errors are retried without
   * counting; a successful connection starts the count again.
   */
  async run(): Promise<AgentExit> {
    const maxAuthFailures = this.#opts.maxAuthFailures ?? 10;
    let attempt = 0;
    let authFailures = 0;
    while (!this.#stopping) {
      try {
        const session = await this.#dial();
        attempt = 0;
        authFailures = 0;
        const replaced = await this.#serve(session);
        if (replaced) {
          this.#log.error('another agent connected with the same token and replaced this one; exiting');
          return 'replaced';
        }
      } catch (err) {
        const e = err as NodeJS.ErrnoException & { status?: number };
        const error = explainCertificateFailure(this.#opts.server, err) ?? e.message;
        this.#log.error({ status: e.status, code: e.code, error }, 'tunnel: dial failed');
        if (err instanceof DialRefused && err.status === 401 && ++authFailures >= maxAuthFailures) {
          this.#log.fatal({ authFailures }, rejectedMessage(authFailures));
          return 'rejected';
        }
      }
      if (this.#stopping) break;
      const delay = backoffDelay(attempt++);
      this.#log.info({ delayMs: delay }, 'tunnel: reconnecting');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wake = undefined;
    }
    return 'stopped';
  }

  /** Upgrades a connection to the daemon and starts a mux session on it. */
  #dial(): Promise<MuxSession> {
    const url = new URL(TUNNEL_PATH, this.#opts.server);
    // Only this dial trusts --ca-file: the targets' certificates keep the default roots (and --skip-tls).
    const ca = url.protocol === 'https:' && this.#opts.caFile ? withDefaultRoots(readCaFile(this.#opts.caFile)) : undefined;
    const headers: Record<string, string> = {
      Connection: 'Upgrade',
      Upgrade: TUNNEL_UPGRADE,
      Authorization: `Bearer ${this.#opts.token()}`,
      [AGENT_VERSION_HEADER]: VERSION,
      [TARGET_TIMEOUT_HEADER]: String(this.#opts.targetTimeoutMs),
      [WINDOW_GROWTH_HEADER]: '1',
    };
    const probes = this.#probes.support();
    if (probes) headers[PROBES_HEADER] = formatProbesHeader(probes);
    return dialUpgrade({ url, headers, ca, timeoutMs: 10_000 }, (socket, answer) => {
      // The window the daemon gives our streams; an older daemon names none: the fixed 1 MiB.
      const sendWindow = sendWindowOf(answer[STREAM_WINDOW_HEADER]);
      socket.setNoDelay(true);
      socket.setKeepAlive(true, 10_000);
      return new MuxSession(socket, { opener: false, sendWindow });
    });
  }

  /** Serves one session until it closes; resolves true when the daemon said another agent replaced it. */
  #serve(session: MuxSession): Promise<boolean> {
    this.#session = session;
    let replaced = false;
    this.#log.info({ server: this.#opts.server }, 'tunnel: connected');
    session.on('stream', this.#onStream);
    session.on('goaway', (reason: string) => {
      if (reason === GOAWAY_REPLACED) replaced = true;
      this.#log.warn({ reason }, 'tunnel: daemon closing the session');
    });
    keepalive(session, {
      intervalMs: PING_INTERVAL_MS,
      timeoutMs: PING_TIMEOUT_MS,
      onDead: () => {
        this.#log.warn('tunnel: keepalive timeout, dropping the session');
        session.destroy(new Error('keepalive timeout'));
      },
    });
    return new Promise((resolve) => {
      session.once('close', (err?: Error) => {
        if (err && !this.#stopping) this.#log.warn({ error: err.message }, 'tunnel: session ended');
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
    const closeProbes = () => this.#probes.close().catch(() => {});
    if (!session || session.destroyed) return closeProbes();
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => session.destroy(new Error('shutdown grace period over')), graceMs);
      session.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      session.close('agent shutting down');
    });
    await closeProbes();
  }
}
