import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import type { ResourceType } from '../../src/api/schemas/monitoring.ts';
import { MAX_REQUEST_BODY_BYTES } from '../../src/api/schemas/http-check.ts';
import { invalidField } from '../../src/errors.ts';
import { definedHeaders, type RequestFields } from '../probes/http-request-store.ts';
import { HTTP_ONLY, statusRange } from '../probes/probe-input.ts';

/** RFC 9110 token: what a header name may be. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** Headers the HTTP client sets itself from the request: a resource setting them would break the framing or the target. */
const CLIENT_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'upgrade', 'te', 'keep-alive', 'trailer']);

/**
 * 400 naming the field for request fields that cannot make a valid request
 * (docs/API.md#resource-fields). `f` is the whole set a resource would have: a create body, or the
 * stored fields with a PATCH merged in. Messages never quote a value: some are secrets.
 */
export function checkRequestFields(type: ResourceType, f: RequestFields): void {
  if (type !== 'HTTP') {
    const set = HTTP_ONLY.filter((k) => f[k] != null);
    if (set.length) throw invalidField(set[0], `only HTTP resources take ${set.join(', ')}`);
  }
  const plain = definedHeaders(f.headers ?? {});
  const secret = definedHeaders(f.secretHeaders ?? {});
  checkHeaderNames('headers', Object.keys(plain), new Set());
  checkHeaderNames('secretHeaders', Object.keys(secret), new Set(Object.keys(plain).map((n) => n.toLowerCase())));
  if (Object.keys(plain).length + Object.keys(secret).length > 32)
    throw invalidField('secretHeaders', 'at most 32 headers in all, plain and secret');
  if (f.auth && [...Object.keys(plain), ...Object.keys(secret)].some((n) => n.toLowerCase() === 'authorization'))
    throw invalidField('auth', 'an authorization header and auth together: keep one');
  if (f.body != null) {
    if (f.method === 'HEAD') throw invalidField('body', 'a HEAD request has no body');
    if (Buffer.byteLength(f.body, 'utf8') > MAX_REQUEST_BODY_BYTES) throw invalidField('body', 'at most 64 KiB in UTF-8');
  } else if (f.contentType != null) {
    throw invalidField('contentType', 'a content type needs a body');
  }
  checkClientCert(f.clientCert ?? undefined, f.clientKey ?? undefined);
  (f.expectStatus ?? []).forEach((s, i) => {
    const [from, to] = statusRange(s);
    if (from > to) throw invalidField(`expectStatus[${i}]`, `the range starts after its end (${from} > ${to})`);
  });
}

function checkHeaderNames(field: string, names: string[], taken: Set<string>): void {
  const seen = new Set<string>();
  for (const name of names) {
    // Names are not secret; still, quote only what passed the token rule.
    if (!TOKEN.test(name)) throw invalidField(field, "a header name must be an HTTP token (letters, digits and !#$%&'*+-.^_`|~)");
    const lower = name.toLowerCase();
    if (CLIENT_HEADERS.has(lower)) throw invalidField(field, `${name} is set by the HTTP client itself`);
    if (taken.has(lower)) throw invalidField(field, `${name} is also in headers: a header is plain or secret, not both`);
    if (seen.has(lower)) throw invalidField(field, `${name} is given twice (header names are case-insensitive)`);
    seen.add(lower);
  }
}

/** Both or neither; each must parse as PEM, and the key must be the certificate's. */
function checkClientCert(cert: string | undefined, key: string | undefined): void {
  if (cert === undefined && key === undefined) return;
  if (key === undefined) throw invalidField('clientKey', 'a client certificate needs its key (clientKey)');
  if (cert === undefined) throw invalidField('clientCert', 'a client key needs its certificate (clientCert)');
  let x509: X509Certificate;
  let private_: KeyObject;
  try {
    x509 = new X509Certificate(cert);
  } catch {
    throw invalidField('clientCert', 'not a PEM certificate');
  }
  try {
    private_ = createPrivateKey(key);
  } catch {
    throw invalidField('clientKey', 'not a PEM private key (an encrypted key is not supported)');
  }
  if (!x509.checkPrivateKey(private_)) throw invalidField('clientKey', 'the key does not match the certificate');
}
