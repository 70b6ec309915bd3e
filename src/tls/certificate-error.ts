/**
 * Certificate verification failures, told apart from other connection errors
 * so that the CLI and the agent can say what to do instead of printing an
 * OpenSSL code. The codes are OpenSSL's X509 verify results as Node reports
 * them, plus Node's own host-name check.
 */
const UNTRUSTED =
  /^(?:UNABLE_TO_GET_ISSUER_CERT(?:_LOCALLY)?|UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|CERT_UNTRUSTED|INVALID_CA)$/;
const OTHER = /^(?:CERT_[A-Z_]+|ERR_TLS_CERT_ALTNAME_INVALID|HOSTNAME_MISMATCH|UNABLE_TO_[A-Z_]+)$/;

/** The verification error in `err` or its causes (fetch wraps it in a TypeError), if any. */
export function certificateFailure(err: unknown): (Error & { code: string }) | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && (UNTRUSTED.test(code) || OTHER.test(code))) return e as Error & { code: string };
  }
  return undefined;
}

/**
 * One line on a verification failure towards `origin`, or undefined for any
 * other error. An unknown issuer gets the ways to trust a private CA.
 */
export function explainCertificateFailure(origin: string, err: unknown): string | undefined {
  const failure = certificateFailure(err);
  if (!failure) return undefined;
  const what = `cannot verify the TLS certificate of ${origin}: ${failure.message} (${failure.code})`;
  if (UNTRUSTED.test(failure.code)) {
    return `${what}; if a private CA issued it, pass --ca-file <ca.pem> (or set MONCTL_CA_FILE or NODE_EXTRA_CA_CERTS)`;
  }
  if (failure.code === 'ERR_TLS_CERT_ALTNAME_INVALID') return `${what}; use a server name that the certificate lists`;
  return what;
}
