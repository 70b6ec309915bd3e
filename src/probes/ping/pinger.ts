/**
 * The echoes of every PING check of the process, on one ICMP socket per family
 * (docs/DECISIONS.md#ping-checks). A reply is matched to its echo by sequence number and checked
 * against the address the echo went to; the round trip is the kernel's receive time less the
 * send time, so how late the reader runs does not count in it. The reader is a short timer that
 * drains the non-blocking sockets while echoes are out: no thread is held and nothing blocks.
 */
import { type IcmpFamily, IcmpSocket, type IcmpMode } from './icmp-socket.ts';
import { libc } from './libc.ts';

/** Between two drains of the sockets while echoes are out, ms: the most a reply waits to be read. */
export const DRAIN_MS = 5;
/** After a failed open, the next check tries again past this (a capability or sysctl may come). */
const REOPEN_AFTER_MS = 30_000;
/** Sequence numbers are 16 bits: at most this many echoes out per family. */
const MAX_IN_FLIGHT = 0x10000;

export interface EchoesResult {
  sent: number;
  /** Echoes tried (sent, or refused by the kernel): fewer than asked when the deadline left no room. */
  tried: number;
  /** Round trips of the echoes that came back, ms. */
  rtts: number[];
  /** Why an echo could not be sent (the first errno), if one could not. */
  sendError: string | null;
}

interface Pending {
  from: string;
  serial: number;
  sentNs: bigint;
  run: EchoRun;
}

interface EchoRun {
  rtts: number[];
  seqs: number[];
  /** Echoes out, not yet back. */
  waiting: number;
  allSent: boolean;
  done: boolean;
  finish: () => void;
}

interface FamilyState {
  socket: IcmpSocket | null;
  error: { message: string; at: number } | null;
  pending: Map<number, Pending>;
  nextSeq: number;
  /** Counts the family's echoes (wrapping at 2^32); carried in the payload. */
  serial: number;
}

const families = new Map<IcmpFamily, FamilyState>();
let drainTimer: NodeJS.Timeout | null = null;
const logged = new Set<string>();

function state(family: IcmpFamily): FamilyState {
  let s = families.get(family);
  if (!s) {
    s = { socket: null, error: null, pending: new Map(), nextSeq: 0, serial: 0 };
    families.set(family, s);
  }
  return s;
}

/** The family's socket, opened on first use; a string says why ICMP cannot be used (logged once). */
function socketOf(family: IcmpFamily): IcmpSocket | string {
  const s = state(family);
  if (s.socket) return s.socket;
  if (s.error && Date.now() - s.error.at < REOPEN_AFTER_MS) return s.error.message;
  const lib = libc();
  const opened = lib instanceof Error ? `ICMP sockets cannot be used: ${lib.message}` : IcmpSocket.open(lib, family);
  if (typeof opened === 'string') {
    s.error = { message: opened, at: Date.now() };
    if (!logged.has(opened)) {
      logged.add(opened);
      process.emitWarning(`PING checks (IPv${family}): ${opened}`, { code: 'MONCTL_ICMP' });
    }
    return opened;
  }
  s.socket = opened;
  s.error = null;
  return opened;
}

/** How the family's echoes go out (`datagram` or `raw`), once a check has opened its socket. */
export function icmpMode(family: IcmpFamily): IcmpMode | null {
  return families.get(family)?.socket?.mode ?? null;
}

/**
 * Sends `count` echoes to `address` (4 or 16 bytes) `intervalMs` apart and waits for their replies
 * until `deadline` (epoch ms): the echoes not back by then are lost. An echo that would leave less
 * than an interval before the deadline is not tried (a reply could not be told from a loss): `tried`
 * says how many were. A string: ICMP cannot be used.
 */
export function sendEchoes(
  family: IcmpFamily,
  address: Buffer,
  count: number,
  intervalMs: number,
  deadline: number,
): Promise<EchoesResult> | string {
  const socket = socketOf(family);
  if (typeof socket === 'string') return socket;
  const s = state(family);
  const from = address.toString('hex');
  return new Promise<EchoesResult>((resolve) => {
    let sent = 0;
    let sendError: string | null = null;
    let attempts = 0;
    let next: NodeJS.Timeout | undefined;
    const run: EchoRun = {
      rtts: [],
      seqs: [],
      waiting: 0,
      allSent: false,
      done: false,
      finish() {
        if (run.done) return;
        run.done = true;
        clearTimeout(next);
        clearTimeout(timeout);
        for (const seq of run.seqs) if (s.pending.get(seq)?.run === run) s.pending.delete(seq);
        resolve({ sent, tried: attempts, rtts: run.rtts, sendError });
      },
    };
    const timeout = setTimeout(run.finish, Math.max(0, deadline - Date.now()));
    const sendOne = () => {
      attempts++;
      const seq = freeSeq(s);
      s.serial = (s.serial + 1) >>> 0;
      const serial = s.serial;
      const sentNs = seq === null ? 'too many echoes in flight' : socket.send(address, seq, serial);
      if (typeof sentNs === 'bigint' && seq !== null) {
        s.pending.set(seq, { from, serial, sentNs, run });
        run.seqs.push(seq);
        run.waiting++;
        sent++;
        scheduleDrain();
      } else sendError ??= String(sentNs);
      if (attempts < count && deadline - Date.now() >= 2 * intervalMs) next = setTimeout(sendOne, intervalMs);
      else {
        run.allSent = true;
        if (run.waiting === 0) run.finish();
      }
    };
    sendOne();
  });
}

function freeSeq(s: FamilyState): number | null {
  if (s.pending.size >= MAX_IN_FLIGHT) return null;
  while (s.pending.has(s.nextSeq)) s.nextSeq = (s.nextSeq + 1) & 0xffff;
  const seq = s.nextSeq;
  s.nextSeq = (s.nextSeq + 1) & 0xffff;
  return seq;
}

function scheduleDrain(): void {
  if (drainTimer === null) drainTimer = setTimeout(drain, DRAIN_MS);
}

function drain(): void {
  drainTimer = null;
  let out = 0;
  for (const s of families.values()) {
    s.socket?.drain((reply) => {
      const p = s.pending.get(reply.seq);
      // Another address answering with our sequence number is not the echo's reply.
      if (!p || p.from !== reply.from || p.serial !== reply.serial) return;
      s.pending.delete(reply.seq);
      p.run.rtts.push(Math.max(0, Number(reply.receivedNs - p.sentNs) / 1e6));
      p.run.waiting--;
      if (p.run.waiting === 0 && p.run.allSent) p.run.finish();
    });
    out += s.pending.size;
  }
  if (out > 0) scheduleDrain();
}
