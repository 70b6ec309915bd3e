import { type DialogueReader, quote, StartTlsRefused } from './reader.ts';

/** POP3 (RFC 2595): the +OK greeting, then STLS answered +OK. */
export async function pop3(reader: DialogueReader): Promise<void> {
  const greeting = await reader.line();
  if (!greeting.startsWith('+OK')) throw new StartTlsRefused(`POP3 greeting: ${quote(greeting)}`);
  reader.write('STLS\r\n');
  const answer = await reader.line();
  if (!answer.startsWith('+OK')) throw new StartTlsRefused(`POP3 STLS refused: ${quote(answer)}`);
}
