import { type DialogueReader, quote, StartTlsRefused } from './reader.ts';

/** The SSLRequest message: its length (8) and the code 1234 5679 (PostgreSQL protocol, 55.2.10). */
const SSL_REQUEST = Buffer.from([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]);

/** PostgreSQL: SSLRequest answered with the single byte 'S' ('N': the server has ssl off). */
export async function postgres(reader: DialogueReader): Promise<void> {
  reader.write(SSL_REQUEST);
  const [answer] = await reader.bytes(1);
  if (answer === 0x53) return;
  if (answer === 0x4e) throw new StartTlsRefused('PostgreSQL refused SSL (N: ssl is off on the server)');
  throw new StartTlsRefused(`PostgreSQL answered SSLRequest with ${quote(String.fromCharCode(answer))}`);
}
