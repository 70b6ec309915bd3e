/**
 * The phases of each HTTP check (DNS, connect, TLS, first byte), read from the connection its own
 * request went out on (docs/DECISIONS.md#probe-timing). undici pools connections and hides which
 * one a request used, so: the connector notes each new socket's phase times on the socket; an
 * interceptor marks the check whose request undici is about to write; undici's `sendHeaders`
 * diagnostics channel, published synchronously right after, names the socket. A socket's phases
 * go to the first request written on it; a reused connection adds none.
 */
import { subscribe } from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import type { Dispatcher } from 'undici';
import type { CheckTiming } from './types.ts';

interface SocketPhases {
  dnsMs: number | null;
  connectMs: number | null;
  tlsMs: number | null;
  /** Already given to a request: later requests on this connection reuse it. */
  claimed: boolean;
}

const phasesOf = new WeakMap<Socket, SocketPhases>();

/**
 * Notes the phase times of a socket the connector just created (before any of its events fired).
 * An IP literal needs no lookup: its dnsMs stays null, like a phase that did not happen.
 */
export function timeSocket(socket: Socket, secure: boolean): void {
  const started = performance.now();
  const phases: SocketPhases = { dnsMs: null, connectMs: null, tlsMs: null, claimed: false };
  phasesOf.set(socket, phases);
  let mark = started;
  socket.once('lookup', () => {
    const now = performance.now();
    phases.dnsMs = now - mark;
    mark = now;
  });
  socket.once('connect', () => {
    const now = performance.now();
    phases.connectMs = now - mark;
    mark = now;
  });
  if (secure) socket.once('secureConnect', () => (phases.tlsMs = performance.now() - mark));
}

/** The timing of a check that only connects (TCP): its socket's phases, no first byte. */
export function connectTiming(socket: Socket, started: number): CheckTiming {
  const phases = phasesOf.get(socket);
  return {
    dnsMs: round(phases?.dnsMs ?? null),
    connectMs: round(phases?.connectMs ?? null),
    tlsMs: null,
    firstByteMs: null,
    totalMs: round(performance.now() - started) ?? 0,
  };
}

/** One check's phases as its request (and each redirect hop's) goes out and is answered. */
export class TimingRecorder {
  readonly started = performance.now();
  /**
   * The new connections this check's requests went out on. Read when the timing is asked for:
   * undici's own connect listener runs first and writes the request before ours has noted the
   * phase's end.
   */
  private readonly opened: SocketPhases[] = [];
  private firstByteMs: number | null = null;
  private sentAt = 0;
  /** The peer address of the connection the last request went out on. */
  remoteAddress: string | null = null;

  sent(socket: Socket): void {
    this.sentAt = performance.now();
    this.remoteAddress = socket.remoteAddress ?? this.remoteAddress;
    const phases = phasesOf.get(socket);
    if (!phases || phases.claimed) return;
    phases.claimed = true;
    this.opened.push(phases);
  }

  answered(): void {
    if (this.sentAt > 0) this.firstByteMs = add(this.firstByteMs, performance.now() - this.sentAt);
  }

  /** The phases so far, rounded to 0.1 ms; totalMs since the check started. */
  timing(): CheckTiming {
    const sum = (phase: 'dnsMs' | 'connectMs' | 'tlsMs') => round(this.opened.reduce<number | null>((a, p) => add(a, p[phase]), null));
    return {
      dnsMs: sum('dnsMs'),
      connectMs: sum('connectMs'),
      tlsMs: sum('tlsMs'),
      firstByteMs: round(this.firstByteMs),
      totalMs: round(performance.now() - this.started) ?? 0,
    };
  }
}

/** Redirect hops add up: each hop's new connection and wait are part of the check. */
const add = (a: number | null, b: number | null) => (b === null ? a : (a ?? 0) + b);
const round = (ms: number | null) => (ms === null ? null : Math.round(ms * 10) / 10);

/** Recorders by the check's abort signal: it rides every hop's dispatch options unchanged. */
const bySignal = new WeakMap<object, TimingRecorder>();
/** The check whose request undici is writing right now (set in onRequestStart, read by sendHeaders). */
let writing: TimingRecorder | null = null;
let subscribed = false;

/** Times the check that owns `signal` (call before its request). */
export function recordTiming(signal: AbortSignal): TimingRecorder {
  if (!subscribed) {
    subscribed = true;
    subscribe('undici:client:sendHeaders', (message) => {
      const recorder = writing;
      writing = null;
      recorder?.sent((message as { socket: Socket }).socket);
    });
  }
  const recorder = new TimingRecorder();
  bySignal.set(signal, recorder);
  return recorder;
}

/**
 * The interceptor (inside the redirect one, so it sees every hop): undici calls a request's
 * onRequestStart just before it writes the request's head and publishes `sendHeaders`.
 */
export const timingInterceptor: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (opts, handler) => {
  // Dispatcher.request passes its signal down in the dispatch options (typed only on request's).
  const signal = (opts as { signal?: object | null }).signal;
  const recorder = signal ? bySignal.get(signal) : undefined;
  if (!recorder) return dispatch(opts, handler);
  return dispatch(opts, {
    onRequestStart(controller, context) {
      writing = recorder;
      handler.onRequestStart?.(controller, context);
    },
    onRequestUpgrade(controller, statusCode, headers, socket) {
      handler.onRequestUpgrade?.(controller, statusCode, headers, socket);
    },
    onResponseStart(controller, statusCode, headers, statusMessage) {
      recorder.answered();
      handler.onResponseStart?.(controller, statusCode, headers, statusMessage);
    },
    onResponseData(controller, chunk) {
      handler.onResponseData?.(controller, chunk);
    },
    onResponseEnd(controller, trailers) {
      handler.onResponseEnd?.(controller, trailers);
    },
    onResponseError(controller, err) {
      handler.onResponseError?.(controller, err);
    },
  });
};
