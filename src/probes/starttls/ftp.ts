import { codedReply, type DialogueReader, expectCode } from './reader.ts';

/** FTP (RFC 4217): the 220 greeting, then AUTH TLS answered 234. */
export async function ftp(reader: DialogueReader): Promise<void> {
  expectCode(await codedReply(reader), 220, 'FTP greeting');
  reader.write('AUTH TLS\r\n');
  expectCode(await codedReply(reader), 234, 'FTP AUTH TLS refused');
}
