import { isIP } from 'node:net';
import type { RouteCertificate } from '../../src/api/schemas/tunnel.ts';
import { formatNullable } from '../../src/time.ts';
import type { DaemonContext } from '../context.ts';
import { bestFor } from './rank.ts';
import { wildcardAcmeBlocker } from './wildcard-acme.ts';

/**
 * The certificate the HTTPS edge serves for a hostname, for the route detail:
 * the best stored one covering it, else what ACME is doing about it.
 */
export async function certificateOfHost(ctx: DaemonContext, hostname: string, now = Date.now()): Promise<RouteCertificate> {
  const rows = await ctx.db
    .selectFrom('certificates')
    .select(['id', 'source', 'hostnames', 'cert_pem', 'not_before', 'not_after', 'last_error', 'failures', 'acme_name'])
    .where((eb) => eb.or([eb('source', '=', 'UPLOAD'), eb('acme_name', '=', hostname)]))
    .execute();
  const acme = rows.find((r) => r.acme_name === hostname);
  const lastError = acme?.last_error ?? null;
  const best = bestFor(
    hostname,
    rows
      .filter((r) => r.cert_pem !== null)
      .map((r) => ({
        ...r,
        id: Number(r.id),
        hostnames: JSON.parse(r.hostnames) as string[],
        notBefore: Number(r.not_before),
        notAfter: Number(r.not_after),
      })),
    now,
  );
  if (best) {
    return {
      state: best.notAfter <= now ? 'EXPIRED' : 'VALID',
      certificateId: best.id,
      source: best.source,
      notAfter: formatNullable(best.notAfter),
      lastError: best.source === 'ACME' ? lastError : null,
    };
  }
  // A wildcard route with no certificate: ACME orders one only through DNS-01; say what is missing.
  const blocker = hostname.startsWith('*.') && !acme && ctx.config.acme ? wildcardAcmeBlocker(ctx.config) : undefined;
  if (blocker) return { state: 'FAILED', certificateId: null, source: 'ACME', notAfter: null, lastError: blocker };
  if (acme && Number(acme.failures) > 0)
    return { state: 'FAILED', certificateId: Number(acme.id), source: 'ACME', notAfter: null, lastError };
  // ACME orders no certificate for an IP address.
  if (acme || (ctx.config.acme && !isIP(hostname)))
    return { state: 'PENDING', certificateId: acme ? Number(acme.id) : null, source: 'ACME', notAfter: null, lastError: null };
  return { state: 'NONE', certificateId: null, source: null, notAfter: null, lastError: null };
}
