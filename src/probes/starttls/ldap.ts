import { type DialogueReader, MAX_MESSAGE_BYTES, quote, StartTlsRefused } from './reader.ts';

const START_TLS_OID = '1.3.6.1.4.1.1466.20037';

/** TLV of BER (definite short-form lengths: every part of this request is short). */
const tlv = (tag: number, body: Buffer) => Buffer.concat([Buffer.from([tag, body.length]), body]);

/** LDAPMessage { messageID 1, ExtendedRequest [APPLICATION 23] { requestName [0] the StartTLS OID } } (RFC 4511 4.14). */
const START_TLS_REQUEST = tlv(0x30, Buffer.concat([tlv(0x02, Buffer.from([1])), tlv(0x77, tlv(0x80, Buffer.from(START_TLS_OID)))]));

/** LDAP: the StartTLS extended operation, answered by an ExtendedResponse whose resultCode is success (0). */
export async function ldap(reader: DialogueReader): Promise<void> {
  reader.write(START_TLS_REQUEST);
  const message = await readTlv(reader);
  const fields = new BerCursor(message.body);
  fields.next(0x02); // messageID
  const response = new BerCursor(fields.next(0x78));
  const resultCode = response.next(0x0a);
  const code = resultCode.length === 1 ? resultCode[0] : -1;
  if (code === 0) return;
  response.next(0x04); // matchedDN
  const diagnostic = response.next(0x04).toString('utf8');
  throw new StartTlsRefused(`LDAP StartTLS refused: result ${code}${diagnostic ? ` ${quote(diagnostic)}` : ''}`);
}

/** One whole BER element off the socket: its tag byte, then a definite length of at most MAX_MESSAGE_BYTES. */
async function readTlv(reader: DialogueReader): Promise<{ tag: number; body: Buffer }> {
  const [tag, first] = await reader.bytes(2);
  if (tag !== 0x30) throw new StartTlsRefused('LDAP: the answer is not an LDAPMessage');
  let length = first;
  if (first & 0x80) {
    const count = first & 0x7f;
    if (count === 0 || count > 3) throw new StartTlsRefused('LDAP: the answer has an unsupported length');
    length = 0;
    for (const b of await reader.bytes(count)) length = length * 256 + b;
  }
  if (length > MAX_MESSAGE_BYTES) throw new StartTlsRefused(`LDAP: the answer is longer than ${MAX_MESSAGE_BYTES} bytes`);
  return { tag, body: await reader.bytes(length) };
}

/** Walks the elements of a BER constructed value, each checked against the tag expected. */
class BerCursor {
  private at = 0;
  private readonly data: Buffer;

  constructor(data: Buffer) {
    this.data = data;
  }

  next(tag: number): Buffer {
    const d = this.data;
    if (this.at + 2 > d.length || d[this.at] !== tag) throw new StartTlsRefused('LDAP: the answer is not an ExtendedResponse');
    let length = d[this.at + 1];
    let start = this.at + 2;
    if (length & 0x80) {
      const count = length & 0x7f;
      if (count === 0 || count > 3 || start + count > d.length) throw new StartTlsRefused('LDAP: the answer has a bad length');
      length = 0;
      for (let i = 0; i < count; i++) length = length * 256 + d[start + i];
      start += count;
    }
    if (start + length > d.length) throw new StartTlsRefused('LDAP: the answer is cut short');
    this.at = start + length;
    return d.subarray(start, start + length);
  }
}
