import type { ModuleFactory } from '../module.ts';
import { certificateHandlers } from './handlers.ts';
import { CertStore } from './store.ts';

/** Certificates of other daemons on the same database show up within this long. */
const RELOAD_MS = 60_000;

/**
 * Certificates of the HTTPS edge (issue 17): uploaded ones, and with
 * `--acme-directory` ones ordered for route hostnames (daemon/certs/acme/).
 * Serves them by SNI to the TLS edge (daemon/http/edge-tls.ts).
 */
export const certsModule: ModuleFactory = async (ctx) => {
  const store = new CertStore(ctx);
  await store.reload();
  let timer: NodeJS.Timeout | undefined;
  return {
    name: 'certificates',
    handlers: certificateHandlers(store, () => {}),
    edgeTls: {
      context: (name) => store.context(name),
      challenge: async () => undefined,
    },
    start() {
      timer = setInterval(() => void store.reload(), RELOAD_MS);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
    },
  };
};
