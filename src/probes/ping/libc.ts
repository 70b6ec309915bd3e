/**
 * The few libc calls an ICMP socket needs, through koffi (a prebuilt FFI: install scripts are off
 * in this repository, so no addon is compiled at install). Loaded on the first PING check only, so
 * the CLI and the checks of other types never load a native module. Linux x86-64 and arm64 values.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

export const AF_INET = 2;
export const AF_INET6 = 10;
export const SOCK_DGRAM = 2;
export const SOCK_RAW = 3;
const SOCK_NONBLOCK = 0o4000;
const SOCK_CLOEXEC = 0o2000000;
export const SOCK_FLAGS = SOCK_NONBLOCK | SOCK_CLOEXEC;
export const IPPROTO_ICMP = 1;
export const IPPROTO_ICMPV6 = 58;
export const MSG_DONTWAIT = 0x40;
export const EPERM = 1;
export const EACCES = 13;
export const EAGAIN = 11;
export const EINTR = 4;
/** The socket's receive buffer: replies wait there while the event loop is busy. */
export const SOL_SOCKET = 1;
export const SO_RCVBUF = 8;
/** The kernel's receive time of the last datagram read (struct timespec, CLOCK_REALTIME). */
export const SIOCGSTAMPNS = 0x8907;
export const CLOCK_REALTIME = 0;
/** Raw IPv4: a bit set per ICMP type not to deliver (SOL_RAW, ICMP_FILTER). */
export const SOL_RAW = 255;
export const ICMP_FILTER = 1;
/** Raw IPv6: struct icmp6_filter, 256 bits, a bit set per type blocked (SOL_ICMPV6, ICMP6_FILTER). */
export const SOL_ICMPV6 = 58;
export const ICMP6_FILTER = 1;

export interface Libc {
  socket(domain: number, type: number, protocol: number): number;
  bind(fd: number, addr: Buffer, len: number): number;
  setsockopt(fd: number, level: number, name: number, value: Buffer, len: number): number;
  sendto(fd: number, buf: Buffer, len: number, flags: number, addr: Buffer, addrLen: number): number;
  recvfrom(fd: number, buf: Buffer, len: number, flags: number, from: Buffer, fromLen: number[]): number;
  ioctl(fd: number, request: number, out: Buffer): number;
  clockGettime(clock: number, out: Buffer): number;
  inetPton(family: number, text: string, out: Buffer): number;
  close(fd: number): number;
  /** errno of the last call on this thread. */
  errno(): number;
}

let loaded: Libc | Error | undefined;

/** The bindings, or why they cannot be had (no koffi binary for this platform, not Linux). */
export function libc(): Libc | Error {
  loaded ??= load();
  return loaded;
}

function load(): Libc | Error {
  if (process.platform !== 'linux') return new Error(`ICMP sockets are built for Linux, not ${process.platform}`);
  try {
    // require(): koffi is CommonJS with a native part, loaded synchronously on first use. The
    // agent's bundle compiles the probes as CommonJS text, where import.meta has no url: there
    // koffi is looked for beside the entry script (dist/ of an installed package).
    const from = typeof import.meta.url === 'string' ? import.meta.url : pathToFileURL(process.argv[1] ?? `${process.cwd()}/`).href;
    const koffi: typeof import('koffi') = createRequire(from)('koffi');
    const lib = koffi.load('libc.so.6');
    const f = (decl: string) => lib.func(decl);
    const socket = f('int socket(int, int, int)');
    const bind = f('int bind(int, void *, uint32_t)');
    const setsockopt = f('int setsockopt(int, int, int, void *, uint32_t)');
    const sendto = f('intptr_t sendto(int, void *, uintptr_t, int, void *, uint32_t)');
    const recvfrom = f('intptr_t recvfrom(int, _Out_ void *, uintptr_t, int, _Out_ void *, _Inout_ uint32_t *)');
    const ioctl = f('int ioctl(int, unsigned long, _Out_ void *)');
    const clockGettime = f('int clock_gettime(int, _Out_ void *)');
    const inetPton = f('int inet_pton(int, const char *, _Out_ void *)');
    const close = f('int close(int)');
    return {
      socket: (...a) => socket(...a),
      bind: (...a) => bind(...a),
      setsockopt: (...a) => setsockopt(...a),
      sendto: (...a) => Number(sendto(...a)),
      recvfrom: (...a) => Number(recvfrom(...a)),
      ioctl: (...a) => ioctl(...a),
      clockGettime: (...a) => clockGettime(...a),
      inetPton: (...a) => inetPton(...a),
      close: (fd) => close(fd),
      errno: () => koffi.errno(),
    };
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}
