import { type DialogueReader, MAX_ANSWER_LINES, quote, StartTlsRefused } from './reader.ts';

const TAG = 'm1';

/** IMAP (RFC 2595, RFC 9051): the `* OK` greeting, then a tagged STARTTLS answered OK (untagged lines before it skipped). */
export async function imap(reader: DialogueReader): Promise<void> {
  const greeting = await reader.line();
  if (!/^\* OK\b/i.test(greeting)) throw new StartTlsRefused(`IMAP greeting: ${quote(greeting)}`);
  reader.write(`${TAG} STARTTLS\r\n`);
  for (let n = 0; n < MAX_ANSWER_LINES; n++) {
    const line = await reader.line();
    if (!line.startsWith(`${TAG} `)) continue;
    if (/^\S+ OK\b/i.test(line)) return;
    throw new StartTlsRefused(`IMAP STARTTLS refused: ${quote(line)}`);
  }
  throw new StartTlsRefused(`IMAP: no answer to STARTTLS within ${MAX_ANSWER_LINES} lines`);
}
