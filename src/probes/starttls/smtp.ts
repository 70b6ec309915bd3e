import { codedReply, type DialogueReader, expectCode } from './reader.ts';

/** SMTP (RFC 3207): the 220 greeting, EHLO, then STARTTLS answered 220. */
export async function smtp(reader: DialogueReader): Promise<void> {
  expectCode(await codedReply(reader), 220, 'SMTP greeting');
  reader.write('EHLO monctl.invalid\r\n');
  expectCode(await codedReply(reader), 250, 'SMTP EHLO refused');
  reader.write('STARTTLS\r\n');
  expectCode(await codedReply(reader), 220, 'SMTP STARTTLS refused');
}
