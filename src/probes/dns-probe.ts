import type { ProtocolProbe } from './protocol-probe.ts';
import type { DnsOptions } from './types.ts';

/** DNS checks (docs/API.md#check-types): built by the DNS work, not yet on main. */
export const probeDns: ProtocolProbe<DnsOptions> = async () => ({
  status: 'NOT_AVAILABLE',
  message: 'DNS checks are not built yet',
  errorCode: 'CONNECTION_ERROR',
});
