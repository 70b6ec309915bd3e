import { createPrivateKey, X509Certificate } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { invalidField } from '../../src/errors.ts';
import { covers, normaliseCertName } from './names.ts';

/** A certificate chain and key that an edge handshake can use. */
export interface CheckedPair {
  chainPem: string;
  keyPem: string;
  /** The DNS names of the leaf (subjectAltName, else its CN). */
  names: string[];
  subject: string;
  issuer: string;
  serial: string;
  notBefore: number;
  notAfter: number;
}

const BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** `CN=R3, O=Let's Encrypt` from node's one-field-per-line form. */
export const oneLine = (dn: string) => dn.split('\n').filter(Boolean).join(', ');

/** The DNS names a leaf is valid for. */
export function namesOf(leaf: X509Certificate): string[] {
  const san = leaf.subjectAltName;
  if (san) {
    return san
      .split(/,\s*/)
      .filter((e) => e.startsWith('DNS:'))
      .map((e) => normaliseCertName(e.slice(4)))
      .filter((n): n is string => !!n);
  }
  const cn = /(?:^|\n)CN=([^\n]+)/.exec(leaf.subject)?.[1];
  const name = cn && normaliseCertName(cn);
  return name ? [name] : [];
}

/** Reads what a PEM chain says about itself, without checking the key (rows already stored). */
export function describeChain(chainPem: string): Omit<CheckedPair, 'keyPem' | 'chainPem'> {
  const leaf = new X509Certificate(chainPem);
  return {
    names: namesOf(leaf),
    subject: oneLine(leaf.subject),
    issuer: oneLine(leaf.issuer),
    serial: leaf.serialNumber,
    notBefore: Date.parse(leaf.validFrom),
    notAfter: Date.parse(leaf.validTo),
  };
}

/**
 * Checks an upload the way a handshake will need it, naming the field at
 * fault: PEM certificates (leaf first), an unencrypted key matching the leaf,
 * a pair OpenSSL accepts, a leaf not yet expired, and hostnames it covers.
 */
export function checkUpload(
  certificate: string,
  privateKey: string,
  hostnames?: string[],
  now = Date.now(),
): CheckedPair & { hostnames: string[] } {
  const blocks = certificate.match(BLOCK);
  if (!blocks) throw invalidField('certificate', 'holds no PEM certificate (-----BEGIN CERTIFICATE-----)');
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(blocks[0]);
    for (const block of blocks.slice(1)) new X509Certificate(block);
  } catch (err) {
    throw invalidField('certificate', `is not a valid PEM certificate chain (${(err as Error).message})`);
  }
  let key;
  try {
    key = createPrivateKey(privateKey);
  } catch (err) {
    throw invalidField('privateKey', `is not an unencrypted PEM private key (${(err as Error).message})`);
  }
  if (!leaf.checkPrivateKey(key)) throw invalidField('privateKey', 'does not match the first certificate of the chain');
  const chainPem = `${blocks.join('\n')}\n`;
  const keyPem = key.export({ type: 'pkcs8', format: 'pem' }).toString();
  try {
    createSecureContext({ cert: chainPem, key: keyPem });
  } catch (err) {
    throw invalidField('certificate', `cannot serve with this key (${(err as Error).message})`);
  }
  const described = describeChain(chainPem);
  if (described.notAfter <= now) throw invalidField('certificate', `expired on ${leaf.validTo}`);
  if (described.names.length === 0) throw invalidField('certificate', 'names no DNS name (subjectAltName or CN)');
  const served = hostnames
    ? hostnames.map((h, i) => {
        const name = normaliseCertName(h);
        if (!name) throw invalidField(`hostnames[${i}]`, `"${h}" is not a DNS name or *.wildcard`);
        if (!described.names.some((n) => covers(n, name) || n === name)) {
          throw invalidField(`hostnames[${i}]`, `${name} is not covered by the certificate (${described.names.join(', ')})`);
        }
        return name;
      })
    : described.names;
  return { ...described, chainPem, keyPem, hostnames: [...new Set(served)] };
}
