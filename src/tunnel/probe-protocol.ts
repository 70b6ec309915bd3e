import type { Duplex } from 'node:stream';
import type { ProbeResult, ResourceType } from '../probes/types.ts';

/**
 * Remote checks over the tunnel (docs/API.md#check-locations): a new kind of mux stream. The
 * daemon opens a stream whose OPEN payload is `{"probe": <version>}` instead
 * of a `host:port` target, writes one JSON check and its FIN; the agent runs
 * the check with the daemon's own probe code (src/probes/) and answers one
 * JSON result and its FIN. Nothing else changes in the multiplexer.
 *
 * Versioned twice over:
 * - the agent announces what it speaks on its dial (`x-monctl-probes:
 *   protocol=1; concurrency=64; queue=256`); an agent that announces nothing
 *   is too old, and the daemon sends it no check;
 * - each stream names its version; an agent resets a version it does not speak
 *   with `UNSUPPORTED`, and an agent from before remote checks resets the
 *   stream as a bad target (`BAD_TARGET`): both read as "unsupported".
 */
export const PROBE_PROTOCOL = 1;
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

/** A check and its answer are small; anything larger is refused. */
export const PROBE_MESSAGE_LIMIT = 64 * 1024;

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

/** One check, as the daemon sends it. `credential` only for a DOCKER check of a registry with stored credentials. */
export interface RemoteCheck {
  type: ResourceType;
  target: string;
  skipTLS: boolean;
  recursive: boolean;
  timeoutMs: number;
  credential?: { registry: string; username: string; password: string };
}

/** The agent's answer: the probe's result, and how long the check waited for a slot there. */
export interface RemoteAnswer extends Omit<ProbeResult, 'checkedAt'> {
  waitedMs: number;
}

const TYPES = new Set(['HTTP', 'TCP', 'DOCKER']);
const STATUSES = new Set(['AVAILABLE', 'NOT_AVAILABLE', 'UNKNOWN']);
const isString = (v: unknown, max: number): v is string => typeof v === 'string' && v.length <= max;
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0;

/** Validates a check received from the daemon; a string says what is wrong. */
export function parseRemoteCheck(value: unknown): RemoteCheck | string {
  if (typeof value !== 'object' || value === null) return 'the check is not an object';
  const v = value as Record<string, unknown>;
  if (!TYPES.has(v.type as string)) return 'type must be HTTP, TCP or DOCKER';
  if (!isString(v.target, 2048) || !v.target) return 'target must be a string of 1 to 2048 characters';
  if (typeof v.skipTLS !== 'boolean' || typeof v.recursive !== 'boolean') return 'skipTLS and recursive must be booleans';
  if (!isCount(v.timeoutMs) || v.timeoutMs < 1 || v.timeoutMs > 3_600_000) return 'timeoutMs must be 1 to 3600000';
  const check: RemoteCheck = {
    type: v.type as ResourceType,
    target: v.target,
    skipTLS: v.skipTLS,
    recursive: v.recursive,
    timeoutMs: v.timeoutMs,
  };
  if (v.credential !== undefined) {
    const c = v.credential as Record<string, unknown> | null;
    if (!c || !isString(c.registry, 512) || !isString(c.username, 1024) || !isString(c.password, 8192))
      return 'credential must hold registry, username and password';
    check.credential = { registry: c.registry, username: c.username, password: c.password };
  }
  return check;
}

/** Validates the agent's answer; undefined when it is not one. */
export function parseRemoteAnswer(value: unknown): RemoteAnswer | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (!STATUSES.has(v.status as string) || !isString(v.message, 16_384)) return undefined;
  if (v.errorCode !== null && !isString(v.errorCode, 64)) return undefined;
  if (!isCount(v.durationMs) || !isCount(v.waitedMs)) return undefined;
  const answer: RemoteAnswer = {
    status: v.status as ProbeResult['status'],
    message: v.message,
    errorCode: v.errorCode as string | null,
    durationMs: Math.round(v.durationMs),
    waitedMs: Math.round(v.waitedMs),
  };
  if (isCount(v.certNotAfter)) answer.certNotAfter = v.certNotAfter;
  return answer;
}

/** Reads a stream to its end (at most `limit` bytes) and parses it as JSON. */
export function readJsonMessage(stream: Duplex, limit = PROBE_MESSAGE_LIMIT): Promise<unknown> {
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
