import { createSecureContext, type SecureContext, type SecureContextOptions } from 'node:tls';
import type { TlsProfile } from '../config/values.ts';

/** TLS 1.3 suites of both profiles, in Mozilla's order (OpenSSL names). */
export const TLS13_CIPHERS = ['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256'];

/**
 * TLS 1.2 suites of "intermediate", in Mozilla's order: forward secrecy
 * (ECDHE, or DHE over ffdhe2048) and AEAD only, so no plain-RSA key exchange
 * and no CBC (LUCKY13). The DHE ones serve TLS 1.2 clients without ECDHE
 * (rare); they need an RSA certificate.
 */
export const TLS12_CIPHERS = [
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
  'DHE-RSA-AES128-GCM-SHA256',
  'DHE-RSA-AES256-GCM-SHA384',
  'DHE-RSA-CHACHA20-POLY1305',
];

/** Key exchange groups of both profiles, in Mozilla's order. */
export const TLS_CURVES = ['X25519', 'prime256v1', 'secp384r1'];

/**
 * The ffdhe2048 group of RFC 7919, as Mozilla publishes it
 * (`openssl genpkey -genparam -algorithm DH -pkeyopt group:ffdhe2048`). Node's
 * `dhparam: 'auto'` would pick OpenSSL's RFC 3526 group instead, and without
 * any the DHE suites are silently off.
 */
const FFDHE2048 = `-----BEGIN DH PARAMETERS-----
MIIBCAKCAQEA//////////+t+FRYortKmq/cViAnPTzx2LnFg84tNpWp4TZBFGQz
+8yTnc4kmz75fS/jY2MMddj2gbICrsRhetPfHtXV/WVhJDP1H18GbtCFY2VVPe0a
87VXE15/V8k1mE8McODmi3fipona8+/och3xWKE2rec1MKzKT0g6eXq8CrGCsyT7
YdEIqUuyyOP7uWrat2DX9GgdT0Kj3jlN9K5W7edjcrsZCwenyO4KbXCeAvzhzffi
7MA0BM0oNC9hkXL+nOmFg/+OTxIy7vKBg8P+OxtMb61zO7X8vC7CIAXFjvGDfRaD
ssbzSibBsu/6iGtCOGEoXJf//////////wIBAg==
-----END DH PARAMETERS-----
`;

/** The options a profile puts on a TLS server or secure context. */
export type TlsProfileOptions = Pick<
  SecureContextOptions,
  'minVersion' | 'maxVersion' | 'ciphers' | 'ecdhCurve' | 'dhparam' | 'honorCipherOrder'
>;

/**
 * The protocol, cipher and curve options of a profile. Every suite of both
 * profiles is strong, so the client picks (Mozilla: no server preference; a
 * client without AES hardware prefers ChaCha20). Modern is TLS 1.3 only.
 */
export function tlsProfileOptions(profile: TlsProfile = 'intermediate'): TlsProfileOptions {
  const common = { maxVersion: 'TLSv1.3', ecdhCurve: TLS_CURVES.join(':'), honorCipherOrder: false } as const;
  if (profile === 'modern') return { ...common, minVersion: 'TLSv1.3', ciphers: TLS13_CIPHERS.join(':') };
  return { ...common, minVersion: 'TLSv1.2', ciphers: [...TLS13_CIPHERS, ...TLS12_CIPHERS].join(':'), dhparam: FFDHE2048 };
}

/**
 * A secure context for a certificate and key, with the profile. Contexts
 * handed to SNI callbacks carry it too: node 24 takes only their certificate,
 * key and chain, but no context of the daemon should differ from its listener
 * if that ever changes.
 */
export function profiledContext(profile: TlsProfile | undefined, pair: { cert: string | Buffer; key: string | Buffer }): SecureContext {
  return createSecureContext({ ...tlsProfileOptions(profile), cert: pair.cert, key: pair.key });
}
