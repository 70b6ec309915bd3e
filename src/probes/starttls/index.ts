import type { STARTTLS_PROTOCOLS } from '../../api/kinds.ts';
import { ftp } from './ftp.ts';
import { imap } from './imap.ts';
import { ldap } from './ldap.ts';
import { pop3 } from './pop3.ts';
import { postgres } from './postgres.ts';
import type { DialogueReader } from './reader.ts';
import { smtp } from './smtp.ts';

export { DialogueReader, StartTlsRefused } from './reader.ts';

/** Each protocol's dialogue up to the server's "go ahead": resolves then, throws StartTlsRefused (or the socket's error) else. */
export const STARTTLS: Record<(typeof STARTTLS_PROTOCOLS)[number], (reader: DialogueReader) => Promise<void>> = {
  smtp,
  imap,
  pop3,
  ftp,
  postgres,
  ldap,
};
