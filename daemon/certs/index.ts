import type { ModuleFactory } from '../module.ts';
import { AcmeChallenges } from './acme/challenges.ts';
import { AcmeManager } from './acme/manager.ts';
import { certificateHandlers } from './handlers.ts';
import { registerCertificateMetrics } from './metrics.ts';
import { CertStore } from './store.ts';

/** Certificates of other daemons on the same database show up within this long. */
const RELOAD_MS = 60_000;

/**
 * Certificates of the HTTPS edge (docs/API.md#certificates): uploaded ones, and with
 * `--acme-directory` ones ordered for route hostnames (daemon/certs/acme/).
 * Serves them by SNI to the TLS edge (daemon/http/edge-tls.ts), and answers
 * ACME challenges: HTTP-01 on the plain edge, TLS-ALPN-01 on the TLS edge.
 */
export const certsModule: ModuleFactory = async (ctx) => {
  const store = new CertStore(ctx);
  await store.reload();
  registerCertificateMetrics(ctx, store);
  const challenges = new AcmeChallenges(ctx);
  const acme = ctx.config.acme ? new AcmeManager(ctx, store, challenges) : undefined;
  const soon = () => acme?.soon();
  // Pods: hostnames added through another pod are ordered at once (by whichever pod claims them),
  // and certificates ordered, uploaded or deleted through another pod are served within a second.
  ctx.cluster?.onTables(['routes', 'status_pages'], soon);
  ctx.cluster?.onTables(['certificates'], () => store.reload());
  let timer: NodeJS.Timeout | undefined;
  return {
    name: 'certificates',
    handlers: certificateHandlers(store, soon),
    edgeTls: {
      context: (name) => store.context(name),
      challenge: (name) => challenges.alpn(name),
    },
    ...(acme ? { edgeFront: (req, res) => challenges.http01(req, res) } : {}),
    start() {
      timer = setInterval(() => void store.reload(), RELOAD_MS);
      timer.unref();
      ctx.bus.on('routes.changed', soon);
      ctx.bus.on('status-pages.changed', soon);
      acme?.start();
    },
    async stop() {
      clearInterval(timer);
      ctx.bus.off('routes.changed', soon);
      ctx.bus.off('status-pages.changed', soon);
      await acme?.stop();
    },
  };
};
