import type { Certificate } from '../../src/api/schemas/certificates.ts';
import { formatDateTime, formatNullable } from '../../src/time.ts';
import type { CertificateRow } from '../store/schema.ts';
import { describeChain } from './pem.ts';

/** When an ACME certificate is renewed: `fraction` of its lifetime after notBefore. */
export const renewTime = (notBefore: number, notAfter: number, fraction: number) =>
  Math.round(notBefore + (notAfter - notBefore) * fraction);

export function stateOf(row: Pick<CertificateRow, 'cert_pem' | 'not_after' | 'failures'>, now = Date.now()): Certificate['state'] {
  if (row.cert_pem === null) return Number(row.failures) > 0 ? 'FAILED' : 'PENDING';
  return Number(row.not_after) <= now ? 'EXPIRED' : 'VALID';
}

/** A row as the API shows it (never the key). */
export function toCertificate(row: CertificateRow, renewAt: number, now = Date.now()): Certificate {
  const subject = row.cert_pem ? describeChain(row.cert_pem).subject : null;
  const issued = row.not_before !== null && row.not_after !== null;
  return {
    id: Number(row.id),
    source: row.source,
    hostnames: JSON.parse(row.hostnames) as string[],
    state: stateOf(row, now),
    subject,
    issuer: row.issuer,
    serial: row.serial,
    notBefore: formatNullable(row.not_before),
    notAfter: formatNullable(row.not_after),
    renewAt: row.source === 'ACME' && issued ? formatDateTime(renewTime(Number(row.not_before), Number(row.not_after), renewAt)) : null,
    challenge: row.challenge,
    lastError: row.last_error,
    lastErrorAt: formatNullable(row.last_error_at),
    failures: Number(row.failures),
    nextAttemptAt: formatNullable(row.next_attempt_at),
    createdAt: formatDateTime(row.created_at),
    updatedAt: formatDateTime(row.updated_at),
  };
}
