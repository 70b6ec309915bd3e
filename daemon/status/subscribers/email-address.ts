import { domainToASCII } from 'node:url';

/** RFC 5321's limits: 64 octets of local part, 254 for the whole forward path. */
const MAX_LOCAL = 64;
const MAX_ADDRESS = 254;
/** A dot-atom local part (RFC 5322 atext), no quoted strings: what sign-up forms meet in practice. */
const LOCAL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * An email address as a reader typed it, checked and normalised for matching:
 * `{address}` as given (trimmed), `{key}` with the domain lower-cased and
 * turned to ASCII (IDNA) and the local part lower-cased too. Lower-casing the
 * local part is what every large provider does in practice, and matching
 * `Ann@x` and `ann@x` as one reader is what stops a sign-up flood from varying
 * the case to get past the one-confirmation-per-address rule. Dots and `+tags`
 * are left alone: they are distinct mailboxes at most providers.
 * Returns the reason as a string when the address is not usable.
 */
export function normaliseEmail(raw: string): { address: string; key: string } | string {
  const address = raw.trim().normalize('NFC');
  if (address === '') return 'is required';
  if (address.length > MAX_ADDRESS) return `must be at most ${MAX_ADDRESS} characters`;
  const at = address.lastIndexOf('@');
  if (at <= 0 || at === address.length - 1) return 'must be an email address (name@example.com)';
  const local = address.slice(0, at);
  if (local.length > MAX_LOCAL || !LOCAL.test(local)) return 'must be an email address (name@example.com)';
  const domain = domainToASCII(address.slice(at + 1).toLowerCase()).replace(/\.$/, '');
  const labels = domain.split('.');
  if (!domain || labels.length < 2 || !labels.every((l) => LABEL.test(l)) || /^\d+$/.test(labels.at(-1)!)) {
    return 'must be an email address with a domain name (name@example.com)';
  }
  return { address, key: `${local.toLowerCase()}@${domain}` };
}
