import type { Logger } from 'pino';
import { parseRemoteCheck } from '../../src/tunnel/probe-messages.ts';
import {
  PROBE_CHECK_LIMIT,
  PROBE_PROTOCOL,
  PROBE_RESET,
  type ProbeSupport,
  type RemoteAnswer,
  type RemoteCheck,
  readJsonMessage,
} from '../../src/tunnel/probe-protocol.ts';
import { type MuxStream, StreamError } from '../../src/tunnel/mux/stream.ts';
import type { Prober } from '../../src/probes/runner.ts';
import type { ProbeInput } from '../../src/probes/types.ts';

export interface ProbeServerOptions {
  /** Checks run at once (`--probe-concurrency`). */
  concurrency: number;
  /** The probe protocol announced; 0 behaves as an agent from before remote checks. */
  protocol: number;
  log: Logger;
}

interface Waiting {
  stream: MuxStream;
  check: RemoteCheck;
  receivedAt: number;
}

/** Checks held beyond the running ones, per running slot. */
const QUEUE_PER_SLOT = 4;

/**
 * The agent's side of remote checks: reads each check from its probe stream,
 * runs at most `concurrency` at once (the rest wait, up to 4 per slot) with
 * the daemon's own probe code, and answers the result on the same stream.
 * A check the daemon gave up on (it resets the stream) leaves the queue, or
 * its result is dropped.
 *
 * Registry credentials and a check's request secrets (headers, auth, client
 * certificate) arrive with the check they are for, are handed to that check
 * only, and are never kept or logged; the agent keeps no registry tokens
 * either (src/probes/docker/state.ts).
 */
export class ProbeServer {
  readonly #opts: ProbeServerOptions;
  readonly #queue: Waiting[] = [];
  readonly #runners = new Map<string, Promise<Prober>>();
  #running = 0;

  constructor(opts: ProbeServerOptions) {
    this.#opts = opts;
  }

  /** What the agent announces on its dial; undefined when it speaks no probe protocol. */
  support(): ProbeSupport | undefined {
    if (this.#opts.protocol < 1) return undefined;
    return { protocol: this.#opts.protocol, concurrency: this.#opts.concurrency, queue: this.#opts.concurrency * QUEUE_PER_SLOT };
  }

  /** A probe stream opened by the daemon, with the version its OPEN named. */
  serve(stream: MuxStream, version: number): void {
    if (version < 1 || version > Math.min(this.#opts.protocol, PROBE_PROTOCOL)) {
      return void stream.destroy(
        new StreamError(
          PROBE_RESET.unsupported,
          `probe protocol ${version} is not supported by this agent (it speaks ${this.#opts.protocol > 0 ? `1 to ${Math.min(this.#opts.protocol, PROBE_PROTOCOL)}` : 'none'})`,
        ),
      );
    }
    const receivedAt = Date.now();
    readJsonMessage(stream, PROBE_CHECK_LIMIT).then(
      (raw) => {
        const check = parseRemoteCheck(raw, version);
        if (typeof check === 'string') return void stream.destroy(new StreamError(PROBE_RESET.badRequest, check));
        if (stream.destroyed) return;
        if (this.#running >= this.#opts.concurrency && this.#queue.length >= this.#opts.concurrency * QUEUE_PER_SLOT) {
          return void stream.destroy(new StreamError(PROBE_RESET.busy, `the agent's probe queue is full (${this.#queue.length} waiting)`));
        }
        this.#queue.push({ stream, check, receivedAt });
        this.#pump();
      },
      (err: Error & { code?: string }) => {
        if (!stream.destroyed) stream.destroy(new StreamError(PROBE_RESET.badRequest, err.message));
      },
    );
  }

  /** Checks running and waiting (tests, logs). */
  stats(): { running: number; waiting: number } {
    return { running: this.#running, waiting: this.#queue.length };
  }

  #pump(): void {
    while (this.#running < this.#opts.concurrency && this.#queue.length > 0) {
      const next = this.#queue.shift()!;
      if (next.stream.destroyed) continue; // the daemon gave up on it while it waited
      this.#running++;
      void this.#run(next).finally(() => {
        this.#running--;
        this.#pump();
      });
    }
  }

  async #run({ stream, check, receivedAt }: Waiting): Promise<void> {
    const waitedMs = Date.now() - receivedAt;
    let answer: RemoteAnswer;
    try {
      const runner = await this.#runner(check.timeoutMs, check.maxBodyBytes);
      const sent = check.credential;
      // This check's credential, for its own registry only; it goes out of scope with the check.
      const credential = async (registry: string) =>
        sent && sameRegistry(sent.registry, registry) ? { username: sent.username, password: sent.password } : undefined;
      const result = await runner.probe(probeInputOf(check), { credential, report: check.report });
      const { checkedAt: _at, ...rest } = result;
      answer = { ...rest, waitedMs };
    } catch (err) {
      answer = {
        status: 'UNKNOWN',
        message: `agent error: ${(err as Error).message}`,
        errorCode: 'CONNECTION_ERROR',
        durationMs: 0,
        waitedMs,
      };
    }
    // What was checked and how it went; never the check itself, which may carry a credential.
    this.#opts.log.debug(
      { type: check.type, target: check.target, status: answer.status, durationMs: answer.durationMs, waitedMs },
      'remote check',
    );
    if (stream.destroyed) return; // the daemon stopped waiting (timeout) or the tunnel went
    stream.end(JSON.stringify(answer));
  }

  /**
   * One probe runner per timeout and body cap the daemon asks for (in practice
   * one: the daemon sends its own settings, a resource's timeout is per check): its connection pools are
   * reused by every check. Loaded on the first check, so an agent that only
   * relays does without undici (docs/DECISIONS.md, "Agent memory").
   */
  #runner(timeoutMs: number, maxBodyBytes: number | undefined): Promise<Prober> {
    const key = `${timeoutMs}/${maxBodyBytes ?? ''}`;
    let runner = this.#runners.get(key);
    if (!runner) {
      leanCompilers();
      runner = import('../../src/probes/runner.ts').then(({ createProbeRunner }) =>
        createProbeRunner({
          timeoutMs,
          maxBodyBytes,
          cacheTokens: false,
          credential: async () => undefined,
          onBug: (err) => this.#opts.log.error({ error: (err as Error)?.message }, 'probe failed unexpectedly'),
        }),
      );
      this.#runners.set(key, runner);
      if (this.#runners.size > 4) {
        const oldest = this.#runners.keys().next().value!;
        void this.#runners.get(oldest)!.then((r) => r.close());
        this.#runners.delete(oldest);
      }
    }
    return runner;
  }

  async close(): Promise<void> {
    const runners = [...this.#runners.values()];
    this.#runners.clear();
    await Promise.all(runners.map(async (r) => (await r).close()));
  }
}

let lean = false;

/**
 * With its first check, the agent keeps V8 to its baseline compilers: undici's
 * HTTP parser is WebAssembly, and tiering it up to TurboFan, like Maglev for
 * the checks' JavaScript, maps some 25 MB of compiler code and output for a
 * few hundred checks a second that need none of it (docs/DECISIONS.md,
 * "Probe locations"). WebAssembly is used for checks only; Maglev made no
 * difference to relaying (measured with `--no-maglev` on agent.mjs).
 */
function leanCompilers(): void {
  if (lean) return;
  lean = true;
  process.getBuiltinModule('node:v8').setFlagsFromString('--liftoff-only --no-wasm-tier-up --no-wasm-dynamic-tiering --no-maglev');
}

/** The probe's input for a check from the daemon; its secrets live as long as the check. */
function probeInputOf(check: RemoteCheck): ProbeInput {
  const input: ProbeInput = {
    resourceId: check.resourceId ?? 0,
    type: check.type,
    target: check.target,
    skipTLS: check.skipTLS,
    recursive: check.recursive,
  };
  if (check.conditions) input.conditions = check.conditions;
  if (check.http) input.http = check.http;
  if (check.options) input.options = check.options;
  if (check.checkTimeoutMs !== undefined) input.timeoutMs = check.checkTimeoutMs;
  if (check.upsideDown) input.upsideDown = true;
  return input;
}

/** Registry names compare as the daemon stores them: lower case, no scheme. */
function sameRegistry(a: string, b: string): boolean {
  const norm = (s: string) =>
    s
      .trim()
      .toLowerCase()
      .replace(/^https?:\/\//, '')
      .replace(/\/+$/, '');
  return norm(a) === norm(b);
}
