import { ExitCode, MonctlError } from '../errors.ts';

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/**
 * The PEM certificates in a CA file (one or several). Throws a usage error
 * (exit 2) naming the file and where it came from when it cannot be read or
 * holds no certificate.
 */
export function readCaFile(file: string, source = '--ca-file'): string[] {
  let text: string;
  try {
    text = process.getBuiltinModule('node:fs').readFileSync(file, 'utf8');
  } catch (err) {
    throw new MonctlError(
      'usage',
      `${source} ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      ExitCode.usage,
    );
  }
  const certs = text.match(PEM_CERT) ?? [];
  const { X509Certificate } = process.getBuiltinModule('node:crypto');
  try {
    for (const pem of certs) new X509Certificate(pem);
  } catch (err) {
    throw new MonctlError('usage', `${source} ${file}: not a valid PEM certificate (${(err as Error).message})`, ExitCode.usage);
  }
  if (certs.length === 0) throw new MonctlError('usage', `${source} ${file}: no PEM certificate in it`, ExitCode.usage);
  return certs;
}

/**
 * Node's default roots with `extra` added, not replacing them: Mozilla's
 * bundle, plus NODE_EXTRA_CA_CERTS (read at process start) and the system
 * store when Node was told to use it.
 */
export function withDefaultRoots(extra: string[]): string[] {
  return [...process.getBuiltinModule('node:tls').getCACertificates('default'), ...extra];
}

/**
 * Adds the CA file's certificates to this process's default roots, so that
 * every TLS client in it trusts them: the CLI's own transport (node:tls),
 * fetch (the SSE streams) and undici alike. The CLI talks to one daemon per
 * run, so a process-wide setting is the right scope there (the agent instead
 * scopes it to its dial: cli/agent/agent.ts).
 */
export function trustCaFile(file: string, source = '--ca-file'): void {
  process.getBuiltinModule('node:tls').setDefaultCACertificates(withDefaultRoots(readCaFile(file, source)));
}
