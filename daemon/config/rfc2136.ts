import { readFileSync } from 'node:fs';
import { parseHostPort } from '../config.ts';
import type { ValueType } from './types.ts';
import { type AcmeDnsUpdate, TSIG_ALGORITHMS, type TsigAlgorithm } from './values.ts';

/** `--acme-dns-rfc2136 server,keyname,secret-file` as written (the secret is read by `readTsigKey`). */
export interface Rfc2136Setting {
  server: { host: string; port: number };
  keyName: string;
  secretFile: string;
}

/** A DNS name as written in a key: lower case, no trailing dot, labels of 1 to 63 bytes. */
function dnsName(text: string): string | undefined {
  const name = text.trim().toLowerCase().replace(/\.$/, '');
  const ok = name.length > 0 && name.length <= 253 && name.split('.').every((l) => /^[a-z0-9_-]{1,63}$/.test(l));
  return ok ? name : undefined;
}

export const rfc2136: ValueType<Rfc2136Setting> = {
  name: 'server[:port],keyname,secret-file',
  parse(raw) {
    const parts = typeof raw === 'string' ? raw.split(',').map((p) => p.trim()) : [];
    const keyName = parts.length === 3 ? dnsName(parts[1]) : undefined;
    if (parts.length !== 3 || !parts[0] || !keyName || !parts[2])
      throw new Error(
        `must be SERVER[:PORT],KEYNAME,SECRET-FILE such as 127.0.0.1:53,acme-key,/etc/monctl/tsig.key, got ${JSON.stringify(raw)}`,
      );
    // A bare address (no port, or an IPv6 address without brackets) is the DNS port.
    const bare = !/:\d{1,5}$/.test(parts[0]) || (parts[0].split(':').length > 2 && !parts[0].startsWith('['));
    const server = parseHostPort(bare ? `${parts[0].includes(':') ? `[${parts[0]}]` : parts[0]}:53` : parts[0], 'the server');
    return { server, keyName, secretFile: parts[2] };
  },
  format: (v) => `${v.server.host.includes(':') ? `[${v.server.host}]` : v.server.host}:${v.server.port},${v.keyName},${v.secretFile}`,
};

/** The key of a secret file: its algorithm and the secret's bytes. */
export type TsigSecret = Pick<AcmeDnsUpdate, 'algorithm' | 'secret'>;

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * Reads a TSIG secret file: the base64 secret alone (hmac-sha256), or BIND's
 * key clause as `tsig-keygen` and knot's `keymgr -t` print it
 * (`key "name" { algorithm hmac-sha256; secret "…"; };`), the clause of
 * `keyName` when the file has several. Throws an Error saying what is wrong.
 */
export function readTsigKey(file: string, keyName: string): TsigSecret {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const clauses = [...text.matchAll(/key\s+"?([^"\s{]+)"?\s*\{([^}]*)\}/g)].map((m) => ({ name: dnsName(m[1]), body: m[2] }));
  let algorithm = 'hmac-sha256';
  let secret = text.trim();
  if (clauses.length > 0) {
    const clause = clauses.find((c) => c.name === keyName) ?? (clauses.length === 1 ? clauses[0] : undefined);
    if (!clause) throw new Error(`${file} has no key "${keyName}"`);
    algorithm = (/algorithm\s+"?([A-Za-z0-9-]+)"?\s*;/.exec(clause.body)?.[1] ?? algorithm).toLowerCase();
    secret = /secret\s+"([^"]*)"\s*;/.exec(clause.body)?.[1]?.trim() ?? '';
  }
  if (!(algorithm in TSIG_ALGORITHMS))
    throw new Error(`${file}: algorithm ${algorithm} is not one of ${Object.keys(TSIG_ALGORITHMS).join(', ')}`);
  if (!BASE64.test(secret) || secret.length % 4 !== 0) throw new Error(`${file} must hold a base64 secret or a BIND key clause`);
  const bytes = Buffer.from(secret, 'base64');
  if (bytes.length < 10) throw new Error(`${file}: the secret is ${bytes.length} bytes, too short for a TSIG key`);
  return { algorithm: algorithm as TsigAlgorithm, secret: bytes };
}
