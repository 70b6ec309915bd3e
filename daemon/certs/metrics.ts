import { Gauge } from 'prom-client';
import type { DaemonContext } from '../context.ts';
import type { CertStore } from './store.ts';

/** `monctl_certificate_not_after_seconds{hostname,source}`: when each certificate the HTTPS edge serves expires. */
export function registerCertificateMetrics(ctx: DaemonContext, store: CertStore): void {
  new Gauge({
    name: 'monctl_certificate_not_after_seconds',
    help: 'notAfter (Unix seconds) of each certificate of the HTTPS edge, by name and source (UPLOAD, ACME)',
    labelNames: ['hostname', 'source'] as const,
    registers: [ctx.metrics.registry],
    collect() {
      this.reset();
      for (const cert of store.all)
        for (const hostname of cert.hostnames) this.set({ hostname, source: cert.source }, Math.floor(cert.notAfter / 1000));
    },
  });
}
