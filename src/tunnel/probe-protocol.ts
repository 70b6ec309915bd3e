import type { Duplex } from 'node:stream';
import type { CheckOptions, HttpRequestSpec, ProbeResult, ResourceType } from '../probes/types.ts';

/**
 * Remote checks over the tunnel (docs/API.md#check-locations): a new kind of mux stream. The
 * daemon opens a stream whose OPEN payload is `{"probe": <version>}` instead
 * of a `host:port` target, writes one JSON check and its FIN; the agent runs
 * the check with the daemon's own probe code (src/probes/) and answers one
 * JSON result and its FIN. Nothing else changes in the multiplexer.
 *
 * Versioned twice over:
 * - the agent announces what it speaks on its dial (`x-monctl-probes:
 *   protocol=2; concurrency=64; queue=256`); an agent that announces nothing
 *   is too old, and the daemon sends it no check; one that announces 1 is sent
 *   only the checks protocol 1 can carry (HTTP, TCP and DOCKER, without
 *   conditions, request fields, options, own timeout, upside-down or report:
 *   src/tunnel/probe-messages.ts `protocol2Needs`);
 * - each stream names its version; an agent resets a version it does not speak
 *   with `UNSUPPORTED`, and an agent from before remote checks resets the
 *   stream as a bad target (`BAD_TARGET`): both read as "unsupported".
 */
export const PROBE_PROTOCOL = 2;
export const PROBES_HEADER = 'x-monctl-probes';

/** Reset codes of a probe stream, from the agent. */
export const PROBE_RESET = {
  /** The stream's probe version is not one this agent speaks. */
  unsupported: 'UNSUPPORTED',
  /** The agent's queue is full. */
  busy: 'BUSY',
  /** The check could not be read. */
  badRequest: 'BAD_REQUEST',
} as const;
/** What an agent from before remote checks answers to an OPEN that names no host:port. */
export const OLD_AGENT_RESET = 'BAD_TARGET';

/**
 * The most a check may take on the wire: a resource at every cap of the API (a 64 KiB body, a PEM
 * certificate and key of 64 KiB each, 64 headers of 8 KiB, 32 conditions of 1 KiB) is 821 KB
 * as JSON. The daemon refuses to send a larger one (the location is `unknown`, saying so), the
 * agent to read one (docs/DECISIONS.md, "Probe locations").
 */
export const PROBE_CHECK_LIMIT = 1024 * 1024;
/** The most an answer may take: a report's 4 KiB body excerpt, its headers and 32 conditions' messages fit many times over. */
export const PROBE_ANSWER_LIMIT = 256 * 1024;

/** What an agent says about its remote checks when it dials. */
export interface ProbeSupport {
  protocol: number;
  /** Checks it runs at once. */
  concurrency: number;
  /** Checks it holds waiting for a slot; the daemon sends at most concurrency + queue. */
  queue: number;
}

export function formatProbesHeader(s: ProbeSupport): string {
  return `protocol=${s.protocol}; concurrency=${s.concurrency}; queue=${s.queue}`;
}

/** The agent's announcement, or undefined for an agent that made none (or a garbled one). */
export function parseProbesHeader(value: string | string[] | undefined): ProbeSupport | undefined {
  if (typeof value !== 'string') return undefined;
  const fields = new Map<string, number>();
  for (const part of value.split(';')) {
    const m = /^\s*([a-z]+)\s*=\s*(\d{1,6})\s*$/.exec(part);
    if (m) fields.set(m[1], Number(m[2]));
  }
  const protocol = fields.get('protocol');
  const concurrency = fields.get('concurrency');
  if (!protocol || !concurrency) return undefined;
  return { protocol, concurrency, queue: fields.get('queue') ?? 0 };
}

/** The OPEN payload of a probe stream. */
export function probeStreamTarget(version = PROBE_PROTOCOL): { probe: number } {
  return { probe: version };
}

/** The probe version an OPEN payload names, or undefined when it is a connection target. */
export function probeVersionOf(raw: unknown): number | undefined {
  if (typeof raw !== 'object' || raw === null || !('probe' in raw)) return undefined;
  const v = (raw as { probe: unknown }).probe;
  return typeof v === 'number' && Number.isInteger(v) ? v : -1;
}

/**
 * One check, as the daemon sends it. `credential` only for a DOCKER check of a registry with stored
 * credentials. Protocol 2 adds the rest, each absent when it is the seed's (so a plain check reads
 * the same in both): secrets in `http` and `credential` are the check's own, for it alone.
 */
export interface RemoteCheck {
  type: ResourceType;
  target: string;
  skipTLS: boolean;
  recursive: boolean;
  /** The daemon's `--http-timeout`: the agent builds its probe runner (and its pools) with it. */
  timeoutMs: number;
  credential?: { registry: string; username: string; password: string };
  /** So that the agent parses a resource's conditions once (0: a check of nothing stored). */
  resourceId?: number;
  conditions?: readonly string[];
  http?: HttpRequestSpec;
  /** The type's own options, every field (docs/API.md#check-types); absent for HTTP, DOCKER, SSH and a plain TCP connect. */
  options?: CheckOptions;
  /** The resource's own timeout (`timeoutSeconds`), for this check in place of `timeoutMs`. */
  checkTimeoutMs?: number;
  upsideDown?: boolean;
  /** The daemon's `--max-body-bytes`, so that a `[BODY]` condition reads as much at the agent. */
  maxBodyBytes?: number;
  /** Answer with the report (`POST /admin/api/resources/test`). */
  report?: boolean;
}

/** The agent's answer: the probe's result, and how long the check waited for a slot there. */
export interface RemoteAnswer extends Omit<ProbeResult, 'checkedAt'> {
  waitedMs: number;
}

/** Reads a stream to its end (at most `limit` bytes) and parses it as JSON. */
export function readJsonMessage(stream: Duplex, limit: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      stream.off('data', onData);
      stream.off('end', onEnd);
      reject(err);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit)
        return void stream.destroy(Object.assign(new Error(`message over ${limit} bytes`), { code: PROBE_RESET.badRequest }));
      chunks.push(chunk);
    };
    const onEnd = () => {
      if (settled) return;
      settled = true;
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        reject(Object.assign(new Error('the message is not JSON'), { code: PROBE_RESET.badRequest }));
      }
    };
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('error', fail);
    // Destroyed without an error (and without its end): the message will not come.
    stream.once('close', () => fail(Object.assign(new Error('the stream closed before the message ended'), { code: 'ERR_TUNNEL_CLOSED' })));
  });
}
