/**
 * One non-blocking ICMP socket of one family, shared by every PING check of the process
 * (docs/DECISIONS.md#ping-checks). Datagram ICMP first (no privilege, where
 * net.ipv4.ping_group_range includes the process's group; the kernel sets the echo's id to the
 * socket's port and delivers only its replies), else a raw socket (CAP_NET_RAW; every echo reply of
 * the host arrives on it, so the id and a token in the payload tell ours).
 */
import { randomBytes, randomInt } from 'node:crypto';
import { constants } from 'node:os';
import * as c from './libc.ts';

export type IcmpFamily = 4 | 6;
export type IcmpMode = 'datagram' | 'raw';

/** An echo reply that is ours: its sequence number, where it came from and when the kernel received it. */
export interface EchoReply {
  seq: number;
  /** The echo's serial from its payload: a late reply to an earlier use of the same seq does not match. */
  serial: number;
  /** The source address's bytes as hex (the key the pending echoes are filed under). */
  from: string;
  /** CLOCK_REALTIME, ns. */
  receivedNs: bigint;
}

/** Marks our echoes among the raw socket's (other processes' pings reply to it too). */
const TOKEN = randomBytes(8);
/** The ICMP header, the token, then the echo's serial (4 bytes). */
const PACKET_BYTES = 8 + TOKEN.length + 4;
/**
 * Asked of SO_RCVBUF (the kernel caps it at net.core.rmem_max, 208 KiB by default, and doubles it):
 * about 500 replies at the default cap, wait there while the event loop is busy; past it they are lost.
 */
const RCVBUF_BYTES = 4 * 1024 * 1024;
/** Most datagrams read per drain, so that a flood cannot hold the event loop. */
const MAX_READS_PER_DRAIN = 4096;

function errnoName(errno: number): string {
  return Object.entries(constants.errno).find(([, n]) => n === errno)?.[0] ?? `errno ${errno}`;
}

export class IcmpSocket {
  private readonly recvBuf = Buffer.alloc(1500);
  private readonly fromBuf = Buffer.alloc(28);
  private readonly stamp = Buffer.alloc(16);
  private readonly packet = Buffer.alloc(PACKET_BYTES);
  private readonly addr: Buffer;
  private readonly libc: c.Libc;
  private readonly fd: number;
  readonly family: IcmpFamily;
  readonly mode: IcmpMode;
  /** Raw: the id of our echoes (datagram: the kernel's, not ours to choose). */
  private readonly id: number;

  private constructor(libc: c.Libc, fd: number, family: IcmpFamily, mode: IcmpMode, id: number) {
    this.libc = libc;
    this.fd = fd;
    this.family = family;
    this.mode = mode;
    this.id = id;
    this.addr = Buffer.alloc(family === 4 ? 16 : 28);
    this.addr.writeUInt16LE(family === 4 ? c.AF_INET : c.AF_INET6, 0);
    const size = Buffer.alloc(4);
    size.writeInt32LE(RCVBUF_BYTES);
    libc.setsockopt(fd, c.SOL_SOCKET, c.SO_RCVBUF, size, 4);
    // The first SIOCGSTAMPNS turns receive timestamps on (and fails: nothing was received yet).
    libc.ioctl(fd, c.SIOCGSTAMPNS, this.stamp);
  }

  /** Datagram ICMP, else raw; a string says why neither could be opened (the errno of each). */
  static open(libc: c.Libc, family: IcmpFamily): IcmpSocket | string {
    const af = family === 4 ? c.AF_INET : c.AF_INET6;
    const proto = family === 4 ? c.IPPROTO_ICMP : c.IPPROTO_ICMPV6;
    const dgram = libc.socket(af, c.SOCK_DGRAM | c.SOCK_FLAGS, proto);
    if (dgram >= 0) return new IcmpSocket(libc, dgram, family, 'datagram', 0);
    const dgramErrno = libc.errno();
    const raw = libc.socket(af, c.SOCK_RAW | c.SOCK_FLAGS, proto);
    if (raw < 0) {
      const rawErrno = libc.errno();
      const gid = process.getgid?.() ?? '?';
      return (
        `ICMP sockets are not allowed: datagram ICMP ${errnoName(dgramErrno)} (net.ipv4.ping_group_range excludes group ${gid}), ` +
        `raw ${errnoName(rawErrno)} (needs CAP_NET_RAW); see the README's PING section`
      );
    }
    setReplyFilter(libc, raw, family);
    return new IcmpSocket(libc, raw, family, 'raw', randomInt(1, 0x10000));
  }

  /** Sends one echo request; returns the send time (CLOCK_REALTIME ns), or the errno's name. */
  send(address: Buffer, seq: number, serial: number): bigint | string {
    const p = this.packet;
    p.fill(0, 0, 8);
    p[0] = this.family === 4 ? 8 : 128;
    p.writeUInt16BE(this.id, 4);
    p.writeUInt16BE(seq, 6);
    TOKEN.copy(p, 8);
    p.writeUInt32BE(serial, 8 + TOKEN.length);
    // ICMPv6's checksum covers a pseudo-header: the kernel writes it for both kinds of socket.
    if (this.family === 4) p.writeUInt16BE(checksum(p), 2);
    address.copy(this.addr, this.family === 4 ? 4 : 8);
    const sentNs = this.now();
    const n = this.libc.sendto(this.fd, p, p.length, 0, this.addr, this.addr.length);
    return n === p.length ? sentNs : errnoName(this.libc.errno());
  }

  /** Reads what has arrived without blocking and passes on our echo replies; everything else is ignored. */
  drain(onReply: (reply: EchoReply) => void): void {
    const { libc, fd, recvBuf, fromBuf } = this;
    for (let i = 0; i < MAX_READS_PER_DRAIN; i++) {
      const fromLen = [fromBuf.length];
      const n = libc.recvfrom(fd, recvBuf, recvBuf.length, c.MSG_DONTWAIT, fromBuf, fromLen);
      if (n < 0) {
        if (libc.errno() === c.EINTR) continue;
        return; // EAGAIN: nothing more
      }
      // Raw IPv4 sockets deliver the IP header too; IPv6 and datagram sockets do not.
      const at = this.family === 4 && this.mode === 'raw' ? (recvBuf[0] & 0x0f) * 4 : 0;
      if (n - at < PACKET_BYTES) continue;
      if (recvBuf[at] !== (this.family === 4 ? 0 : 129) || recvBuf[at + 1] !== 0) continue;
      if (this.mode === 'raw' && recvBuf.readUInt16BE(at + 4) !== this.id) continue;
      if (!recvBuf.subarray(at + 8, at + 8 + TOKEN.length).equals(TOKEN)) continue;
      const from = this.family === 4 ? fromBuf.toString('hex', 4, 8) : fromBuf.toString('hex', 8, 24);
      const stamped = libc.ioctl(fd, c.SIOCGSTAMPNS, this.stamp) === 0;
      const serial = recvBuf.readUInt32BE(at + 8 + TOKEN.length);
      onReply({ seq: recvBuf.readUInt16BE(at + 6), serial, from, receivedNs: stamped ? timespecNs(this.stamp) : this.now() });
    }
  }

  close(): void {
    this.libc.close(this.fd);
  }

  private now(): bigint {
    this.libc.clockGettime(c.CLOCK_REALTIME, this.stamp);
    return timespecNs(this.stamp);
  }
}

/** A raw socket gets every ICMP message of the host: let the kernel keep all but echo replies. */
function setReplyFilter(libc: c.Libc, fd: number, family: IcmpFamily): void {
  if (family === 4) {
    const blocked = Buffer.alloc(4);
    blocked.writeUInt32LE(~(1 << 0) >>> 0); // pass type 0, echo reply
    libc.setsockopt(fd, c.SOL_RAW, c.ICMP_FILTER, blocked, 4);
  } else {
    const filter = Buffer.alloc(32, 0xff); // block all ...
    filter.writeUInt32LE((filter.readUInt32LE(16) & ~(1 << (129 & 31))) >>> 0, 16); // ... but 129, echo reply
    libc.setsockopt(fd, c.SOL_ICMPV6, c.ICMP6_FILTER, filter, 32);
  }
}

function timespecNs(ts: Buffer): bigint {
  return ts.readBigInt64LE(0) * 1_000_000_000n + ts.readBigInt64LE(8);
}

/** The Internet checksum (RFC 1071) of an even-length ICMP message. */
function checksum(p: Buffer): number {
  let sum = 0;
  for (let i = 0; i < p.length; i += 2) sum += p.readUInt16BE(i);
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return ~sum & 0xffff;
}
