import { createHmac, timingSafeEqual } from 'node:crypto';
import { type AcmeDnsUpdate, TSIG_ALGORITHMS } from '../../../config/values.ts';
import { CLASS, TYPE, findTsig, rcodeName, readName, wireName } from './wire.ts';

/** Seconds of clock difference allowed between this daemon and the DNS server (RFC 8945 §10: 300 recommended). */
const FUDGE = 300;

type Key = Pick<AcmeDnsUpdate, 'keyName' | 'algorithm' | 'secret'>;

/** TSIG's "variables" (RFC 8945 §4.3.3): what is digested of the TSIG record besides the message. */
function variables(key: Key, timeSigned: number, fudge: number, error: number, other: Buffer): Buffer {
  const fixed = Buffer.alloc(6);
  fixed.writeUInt16BE(CLASS.ANY, 0);
  fixed.writeUInt32BE(0, 2); // TTL
  const rest = Buffer.alloc(12);
  rest.writeUIntBE(timeSigned, 0, 6);
  rest.writeUInt16BE(fudge, 6);
  rest.writeUInt16BE(error, 8);
  rest.writeUInt16BE(other.length, 10);
  return Buffer.concat([wireName(key.keyName), fixed, wireName(key.algorithm), rest, other]);
}

const hmac = (key: Key, ...parts: Buffer[]) => {
  const h = createHmac(TSIG_ALGORITHMS[key.algorithm], key.secret);
  for (const p of parts) h.update(p);
  return h.digest();
};

/** A message signed with TSIG (RFC 8945 §5.1), and the MAC its answer's signature covers. */
export function sign(message: Buffer, key: Key, now = Date.now()): { signed: Buffer; mac: Buffer } {
  const timeSigned = Math.floor(now / 1000);
  const mac = hmac(key, message, variables(key, timeSigned, FUDGE, 0, Buffer.alloc(0)));
  const rdata = Buffer.alloc(16 + mac.length);
  rdata.writeUIntBE(timeSigned, 0, 6);
  rdata.writeUInt16BE(FUDGE, 6);
  rdata.writeUInt16BE(mac.length, 8);
  mac.copy(rdata, 10);
  rdata.writeUInt16BE(message.readUInt16BE(0), 10 + mac.length); // original ID
  // Error and other length stay 0.
  const fixed = Buffer.alloc(10);
  fixed.writeUInt16BE(TYPE.TSIG, 0);
  fixed.writeUInt16BE(CLASS.ANY, 2);
  fixed.writeUInt16BE(rdata.length + wireName(key.algorithm).length, 8);
  const tsig = Buffer.concat([wireName(key.keyName), fixed, wireName(key.algorithm), rdata]);
  const signed = Buffer.concat([message, tsig]);
  signed.writeUInt16BE(message.readUInt16BE(10) + 1, 10);
  return { signed, mac };
}

/**
 * Checks the TSIG of an answer to a signed request (RFC 8945 §5.3): a TSIG
 * error (BADSIG, BADKEY, BADTIME) or an RCODE other than NOERROR throws an
 * Error naming them, as does an answer without a valid signature.
 */
export function verify(answer: Buffer, requestMac: Buffer, key: Key, now = Date.now()): void {
  const rcode = rcodeName(answer.readUInt16BE(2) & 0xf);
  const found = findTsig(answer);
  if (!found) {
    if (rcode !== 'NOERROR') throw new Error(`the DNS server answered ${rcode} without a TSIG signature`);
    throw new Error('the DNS server answered without a TSIG signature');
  }
  const [owner] = readName(answer, found.start);
  let o = found.rdata;
  const [algorithm, afterAlgorithm] = readName(answer, o);
  o = afterAlgorithm;
  const end = found.rdata + found.rdlength;
  if (o + 10 > end) throw new Error('a malformed TSIG record in the DNS answer');
  const timeSigned = answer.readUIntBE(o, 6);
  const fudge = answer.readUInt16BE(o + 6);
  const macSize = answer.readUInt16BE(o + 8);
  if (o + 10 + macSize + 6 > end) throw new Error('a malformed TSIG record in the DNS answer');
  const mac = answer.subarray(o + 10, o + 10 + macSize);
  o += 10 + macSize;
  const originalId = answer.readUInt16BE(o);
  const error = answer.readUInt16BE(o + 2);
  const otherLen = answer.readUInt16BE(o + 4);
  const other = answer.subarray(o + 6, Math.min(end, o + 6 + otherLen));
  if (error !== 0) throw new Error(`the DNS server answered ${rcode} (TSIG ${rcodeName(error)}) to the key ${key.keyName}`);
  if (owner !== key.keyName || algorithm !== key.algorithm)
    throw new Error(`the DNS server signed its answer with ${owner}/${algorithm}, not the key ${key.keyName}/${key.algorithm}`);
  // The digest covers the answer as it was before its TSIG record was added: ARCOUNT one less, the original ID.
  const unsigned = Buffer.from(answer.subarray(0, found.start));
  unsigned.writeUInt16BE(originalId, 0);
  unsigned.writeUInt16BE(unsigned.readUInt16BE(10) - 1, 10);
  const size = Buffer.alloc(2);
  size.writeUInt16BE(requestMac.length);
  const expected = hmac(key, size, requestMac, unsigned, variables(key, timeSigned, fudge, error, other));
  if (mac.length !== expected.length || !timingSafeEqual(mac, expected))
    throw new Error("the DNS server's answer has a bad TSIG signature");
  if (Math.abs(now / 1000 - timeSigned) > fudge) throw new Error("the DNS server's TSIG time is off by more than its fudge (BADTIME)");
  if (rcode !== 'NOERROR') throw new Error(`the DNS server answered ${rcode}`);
}
