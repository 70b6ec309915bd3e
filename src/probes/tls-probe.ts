import type { ProtocolProbe } from './protocol-probe.ts';
import type { TlsOptions } from './types.ts';

/** TLS checks (docs/API.md#check-types): built by the TLS work, not yet on main. */
export const probeTls: ProtocolProbe<TlsOptions> = async () => ({
  status: 'NOT_AVAILABLE',
  message: 'TLS checks are not built yet',
  errorCode: 'CONNECTION_ERROR',
});
