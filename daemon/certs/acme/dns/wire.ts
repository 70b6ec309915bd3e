/** DNS wire-format pieces that dns-packet does not write: UPDATE messages (class NONE) and TSIG's canonical names. */

export const TYPE = { SOA: 6, TXT: 16, TSIG: 250 } as const;
export const CLASS = { IN: 1, NONE: 254, ANY: 255 } as const;
const OPCODE_UPDATE = 5;

const RCODES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED', 'YXDOMAIN', 'YXRRSET', 'NXRRSET', 'NOTAUTH', 'NOTZONE'];
const TSIG_ERRORS: Record<number, string> = { 16: 'BADSIG', 17: 'BADKEY', 18: 'BADTIME', 22: 'BADTRUNC' };

/** RCODE 9 is NOTAUTH, 16 BADSIG…: the names operators find in their server's log. */
export const rcodeName = (code: number) => RCODES[code] ?? TSIG_ERRORS[code] ?? `RCODE ${code}`;

/** A name in canonical wire form (RFC 4034 §6.2: lower case, uncompressed), as TSIG digests it. */
export function wireName(name: string): Buffer {
  const labels = name.toLowerCase().replace(/\.$/, '').split('.').filter(Boolean);
  const parts = labels.map((l) => {
    const b = Buffer.from(l, 'ascii');
    if (b.length > 63) throw new Error(`the DNS label ${l} is longer than 63 bytes`);
    return Buffer.concat([Buffer.from([b.length]), b]);
  });
  const out = Buffer.concat([...parts, Buffer.from([0])]);
  if (out.length > 255) throw new Error(`the DNS name ${name} is longer than 255 bytes`);
  return out;
}

/** One resource record, uncompressed. */
export function record(name: string, type: number, klass: number, ttl: number, rdata: Buffer): Buffer {
  const fixed = Buffer.alloc(10);
  fixed.writeUInt16BE(type, 0);
  fixed.writeUInt16BE(klass, 2);
  fixed.writeUInt32BE(ttl, 4);
  fixed.writeUInt16BE(rdata.length, 8);
  return Buffer.concat([wireName(name), fixed, rdata]);
}

/** TXT RDATA of one string (an ACME digest is 43 bytes; a string holds 255 at most). */
export function txtData(value: string): Buffer {
  const b = Buffer.from(value, 'utf8');
  if (b.length > 255) throw new Error('a TXT string holds 255 bytes at most');
  return Buffer.concat([Buffer.from([b.length]), b]);
}

/**
 * An RFC 2136 UPDATE of `zone` adding (class IN, with `ttl`) or deleting
 * (class NONE: that one record, not the whole set) the TXT record `value` at `name`.
 */
export function updateMessage(id: number, zone: string, name: string, value: string, op: 'add' | 'delete', ttl = 60): Buffer {
  const header = Buffer.alloc(12);
  header.writeUInt16BE(id, 0);
  header.writeUInt16BE(OPCODE_UPDATE << 11, 2);
  header.writeUInt16BE(1, 4); // ZOCOUNT
  header.writeUInt16BE(1, 8); // UPCOUNT
  const zoneSection = Buffer.concat([wireName(zone), Buffer.from([0, TYPE.SOA, 0, CLASS.IN])]);
  const update =
    op === 'add' ? record(name, TYPE.TXT, CLASS.IN, ttl, txtData(value)) : record(name, TYPE.TXT, CLASS.NONE, 0, txtData(value));
  return Buffer.concat([header, zoneSection, update]);
}

/** The offset just past the (possibly compressed) name at `offset`. */
function skipName(buf: Buffer, offset: number): number {
  for (let i = 0; i < 128; i++) {
    if (offset >= buf.length) break;
    const len = buf[offset];
    if (len === 0) return offset + 1;
    if ((len & 0xc0) === 0xc0) return offset + 2;
    offset += len + 1;
  }
  throw new Error('a malformed name in the DNS answer');
}

/** Reads an uncompressed name (TSIG's names are never compressed) and the offset past it. */
export function readName(buf: Buffer, offset: number): [string, number] {
  const labels: string[] = [];
  for (let i = 0; i < 128 && offset < buf.length; i++) {
    const len = buf[offset];
    if (len === 0) return [labels.join('.').toLowerCase(), offset + 1];
    if ((len & 0xc0) !== 0) break;
    labels.push(buf.toString('ascii', offset + 1, offset + 1 + len));
    offset += len + 1;
  }
  throw new Error('a malformed name in the TSIG record');
}

/**
 * Where the last record of the additional section starts, when it is a TSIG
 * record (RFC 8945 §5.1: it must be the last).
 */
export function findTsig(buf: Buffer): { start: number; rdata: number; rdlength: number } | undefined {
  if (buf.length < 12) throw new Error('a DNS answer shorter than its header');
  const counts = [4, 6, 8, 10].map((o) => buf.readUInt16BE(o));
  if (counts[3] === 0) return undefined;
  let offset = 12;
  for (let q = 0; q < counts[0]; q++) offset = skipName(buf, offset) + 4;
  const records = counts[1] + counts[2] + counts[3];
  for (let r = 0; r < records; r++) {
    const start = offset;
    offset = skipName(buf, offset);
    if (offset + 10 > buf.length) break;
    const type = buf.readUInt16BE(offset);
    const rdlength = buf.readUInt16BE(offset + 8);
    if (r === records - 1)
      return type === TYPE.TSIG && offset + 10 + rdlength <= buf.length ? { start, rdata: offset + 10, rdlength } : undefined;
    offset += 10 + rdlength;
  }
  throw new Error('a truncated DNS answer');
}
