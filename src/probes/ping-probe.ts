import type { ProtocolProbe } from './protocol-probe.ts';
import type { PingOptions } from './types.ts';

/** PING checks (docs/API.md#check-types): built by the PING work, not yet on main. */
export const probePing: ProtocolProbe<PingOptions> = async () => ({
  status: 'NOT_AVAILABLE',
  message: 'PING checks are not built yet',
  errorCode: 'CONNECTION_ERROR',
});
