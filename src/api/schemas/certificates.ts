import { type Static, Type } from '@sinclair/typebox';
import { Body, DateTime, Id, NullableDateTime, StringEnum } from './common.ts';

/**
 * Certificates of the HTTPS edge (docs/API.md#certificates): uploaded (a PEM chain and its
 * key), or ordered by the daemon through ACME for route hostnames. Private
 * keys are sealed at rest and never returned.
 */
export const CERTIFICATE_SOURCES = ['UPLOAD', 'ACME'] as const;
export const CERTIFICATE_ROW_STATES = ['VALID', 'EXPIRED', 'PENDING', 'FAILED'] as const;

const NullableString = Type.Union([Type.String(), Type.Null()]);

export const Certificate = Type.Object(
  {
    id: Id,
    source: StringEnum(CERTIFICATE_SOURCES),
    hostnames: Type.Array(Type.String(), { description: 'the names served, wildcards as *.example.com' }),
    state: StringEnum(CERTIFICATE_ROW_STATES, {
      description:
        'VALID: within its validity; EXPIRED: past notAfter; PENDING: ACME, not issued yet; FAILED: ACME, the last order failed and none was issued',
    }),
    subject: NullableString,
    issuer: NullableString,
    serial: NullableString,
    notBefore: NullableDateTime,
    notAfter: NullableDateTime,
    renewAt: Type.Union([DateTime, Type.Null()], { description: 'ACME: when it is renewed (--acme-renew-at of its lifetime)' }),
    challenge: Type.Union([Type.String(), Type.Null()], {
      description: 'ACME: the challenge type that got it (http-01, tls-alpn-01, dns-01)',
    }),
    lastError: Type.Union([Type.String(), Type.Null()], { description: 'ACME: why the last order failed (cleared by the next success)' }),
    lastErrorAt: NullableDateTime,
    failures: Type.Integer({ minimum: 0, description: 'ACME: failed orders in a row' }),
    nextAttemptAt: Type.Union([DateTime, Type.Null()], {
      description: 'ACME: after a failure, no new order before this (at least an hour)',
    }),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { title: 'Certificate' },
);
export type Certificate = Static<typeof Certificate>;

export const CertificateUpload = Body(
  {
    certificate: Type.String({ minLength: 1, maxLength: 65_536, description: 'PEM: the leaf certificate, then its intermediates' }),
    privateKey: Type.String({
      minLength: 1,
      maxLength: 16_384,
      description: 'PEM: the unencrypted private key of the leaf (sealed at rest, never returned)',
    }),
    hostnames: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 253 }), {
        // No uniqueItems (see alert-rules.ts): duplicates are dropped by the handler.
        minItems: 1,
        maxItems: 100,
        description:
          'the names to serve it for (each covered by the certificate; duplicates are ignored); default: every DNS name of the certificate',
      }),
    ),
  },
  'CertificateUpload',
);
export type CertificateUpload = Static<typeof CertificateUpload>;
